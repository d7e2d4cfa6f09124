/**
 * Variable names an environment may not declare. Variables reach `command`
 * and `playwright` tests as process environment, and a declared variable can
 * be overridden by any key that may create sets: a variable read by a loader,
 * a runtime or a shell rather than by the tests would let an override run its
 * own code on the workers (NODE_OPTIONS=--require=/tmp/x.js, LD_PRELOAD=…).
 *
 * Names are compared in upper case: Windows and npm read them regardless of
 * case, and no test needs `path` besides `PATH`.
 */

/** Exact names, each with what reads it. */
const NAMES: ReadonlyMap<string, string> = new Map([
  ['NODE_OPTIONS', 'Node.js reads its command-line options from it (--require, --import, --loader)'],
  ['NODE_PATH', 'Node.js loads modules from the folders it lists'],
  ['NODE_REPL_EXTERNAL_MODULE', 'Node.js loads it as a module'],
  ['ELECTRON_RUN_AS_NODE', 'it turns an Electron binary into a Node.js interpreter'],
  ['LD_PRELOAD', 'the dynamic loader injects the libraries it names into every program'],
  ['LD_LIBRARY_PATH', 'the dynamic loader takes libraries from the folders it lists'],
  ['LD_AUDIT', 'the dynamic loader runs the audit libraries it names'],
  ['GCONV_PATH', 'glibc loads character-set modules from it'],
  ['BASH_ENV', 'bash runs the file it names before every script'],
  ['ENV', 'sh runs the file it names when it starts'],
  ['SHELLOPTS', 'bash takes its options from it'],
  ['BASHOPTS', 'bash takes its options from it'],
  ['PS4', 'bash evaluates it when tracing commands'],
  ['PROMPT_COMMAND', 'bash runs it'],
  ['IFS', 'it changes how shells split words'],
  ['PATH', 'it decides which program runs for every command name'],
  ['PYTHONPATH', 'Python imports modules from the folders it lists'],
  ['PYTHONSTARTUP', 'Python runs the file it names'],
  ['PYTHONHOME', 'Python takes its standard library from it'],
  ['PYTHONINSPECT', 'Python enters interactive mode after the script'],
  ['PYTHONWARNINGS', 'Python imports the warning categories it names'],
  ['PYTHONBREAKPOINT', 'Python imports the function it names'],
  ['PYTHONUSERBASE', 'Python imports site packages from it'],
  ['PERL5OPT', 'Perl reads its command-line options from it (-M loads a module)'],
  ['PERL5LIB', 'Perl loads modules from the folders it lists'],
  ['PERLLIB', 'Perl loads modules from the folders it lists'],
  ['PERL5DB', 'Perl runs it as its debugger'],
  ['RUBYOPT', 'Ruby reads its command-line options from it (-r loads a library)'],
  ['RUBYLIB', 'Ruby loads libraries from the folders it lists'],
  ['JAVA_TOOL_OPTIONS', 'every JVM reads its options from it (-javaagent runs code)'],
  ['_JAVA_OPTIONS', 'every JVM reads its options from it (-javaagent runs code)'],
  ['JDK_JAVA_OPTIONS', 'the java launcher reads its options from it'],
  ['CLASSPATH', 'Java loads classes from it'],
  ['GIT_SSH_COMMAND', 'git runs it'],
  ['GIT_EXEC_PATH', 'git runs its subcommands from it'],
]);

/** Prefixes, for families of such variables. */
const PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['LD_', 'the dynamic loader reads LD_* variables (LD_PRELOAD, LD_AUDIT, …)'],
  ['DYLD_', 'the macOS dynamic loader reads DYLD_* variables (DYLD_INSERT_LIBRARIES, …)'],
  ['NPM_CONFIG_', 'npm reads its settings from npm_config_* variables (node-options, script-shell run code)'],
  ['BASH_FUNC_', 'bash imports functions from BASH_FUNC_* variables'],
];

/** Why `name` may not be declared as a variable, or null when it may. */
export function dangerousVariableReason(name: string): string | null {
  const upper = name.toUpperCase();
  const exact = NAMES.get(upper);
  if (exact !== undefined) return exact;
  return PREFIXES.find(([prefix]) => upper.startsWith(prefix))?.[1] ?? null;
}

/** For messages: the refused names and families. */
export function refusedVariableNames(): string {
  return [...NAMES.keys(), ...PREFIXES.map(([prefix]) => `${prefix}*`)].join(', ');
}

/** The refused names and prefixes (upper case; compared ignoring case), for the published JSON Schema (./config-json-schema.ts), which refuses them too. */
export const REFUSED_VARIABLES: { readonly names: readonly string[]; readonly prefixes: readonly string[] } = Object.freeze({
  names: Object.freeze([...NAMES.keys()]),
  prefixes: Object.freeze(PREFIXES.map(([prefix]) => prefix)),
});
