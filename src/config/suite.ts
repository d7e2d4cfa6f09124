/**
 * Loads runset.config.yaml — the environments and the tests, as code — into
 * one frozen SuiteConfig, or throws one ConfigError.
 *
 * Only the FIRST error is reported: later ones are often consequences of it
 * (a mistyped key, then "missing url"), the fix-and-rerun loop is short, and a
 * single error keeps `path`/`expected` exact for programs that show them.
 *
 * Order of checks: YAML syntax → the file's structure (schema) → each test in
 * file order (type, schema of that type, semantic checks, environments named,
 * placeholders declared, name unique). Schemas are in suite-schema.ts and
 * suite-test-types.ts; the wording of schema failures in suite-explain.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Static, TObject, TSchema } from 'typebox';
import type { Validator } from 'typebox/compile';
import { Compile } from '../core/typebox.js';
import type { Document, YAMLError } from 'yaml';
import { isNode, LineCounter, parseDocument } from './yaml.js';
import type { EnvironmentConfig, OverrideRule, TestCommon, TestSpec, VariableValue } from '../core/types.js';
import { findPlaceholders } from '../executors/template.js';
import { ruleSyntaxError } from './override-rules.js';
import { dangerousVariableReason, refusedVariableNames } from './dangerous-variables.js';
import { ConfigError, describeValue, fail, FailureSignal, formatPath, type DocPath, type Failure } from './suite-error.js';
import { explain, isMapping } from './suite-explain.js';
import { CommonTestProperties, SuiteSchema } from './suite-schema.js';
import { CONFIG_DEFAULTS } from './config-defaults.js';
import { buildWebhooks } from './suite-webhooks.js';
import { buildCodeHosts } from './suite-code-hosts.js';
import type { CodeHostsConfig } from '../core/code-hosts.js';
import { ENV_REFERENCE } from '../secrets/index.js';
import { MAX_SET_TIMEOUT_SECONDS, setTimeoutText } from '../core/deadlines.js';
import { DurationError, parseDuration } from '../core/duration.js';
import type { WebhookConfig } from '../core/webhooks.js';
import { isTestType, TEST_TYPE_NAMES, TEST_TYPES, testSchema } from './suite-test-types.js';
import type { BuildContext, TestTypeDefinition } from './test-type.js';

export { ConfigError, type ConfigErrorDetails } from './suite-error.js';

export interface SuiteConfig {
  /** Absolute path of the YAML file. */
  file: string;
  /** Its folder: relative paths in the file start here. */
  dir: string;
  environments: ReadonlyMap<string, EnvironmentConfig>;
  /** In file order, defaults applied. */
  tests: readonly TestSpec[];
  webhooks: readonly WebhookConfig[];
  /** Where sets with a commit label are reported (GitHub check runs, GitLab commit statuses). */
  codeHosts: CodeHostsConfig;
}

export function loadSuiteConfig(file: string): SuiteConfig {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError({
      file: absolute,
      path: '(file)',
      problem: code === 'ENOENT' ? 'no such file (ENOENT)' : `cannot be read (${code})`,
      expected: 'a readable runset.config.yaml (pass --config FILE or set RUNSET_CONFIG)',
    });
  }
  return parseSuiteConfig(text, absolute);
}

export function parseSuiteConfig(text: string, file: string): SuiteConfig {
  return parseSuiteYaml(text, file, buildSuite);
}

/**
 * Parses YAML text and hands the value to `build`; a YAML error or a failure
 * raised while building becomes one ConfigError with its line. Shared by the
 * full parse and the tests-only parse of an uploaded version (./suite-tests-only.ts).
 */
export function parseSuiteYaml<T>(text: string, file: string, build: (value: unknown, file: string) => T): T {
  const absolute = path.resolve(file);
  const lineCounter = new LineCounter();
  // merge: `<<: *defaults` is how people share settings between tests in YAML.
  const doc = parseDocument(text, { lineCounter, merge: true });
  const syntaxError = doc.errors[0];
  if (syntaxError) throw yamlSyntaxError(syntaxError, absolute);
  try {
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (error) {
      // e.g. an alias to an anchor that is not defined
      fail([], `the YAML cannot be read: ${(error as Error).message}`, 'valid YAML');
    }
    return build(value, absolute);
  } catch (error) {
    if (error instanceof FailureSignal) throw toConfigError(error.failure, absolute, doc, lineCounter);
    throw error;
  }
}

/** Tests that run in `env` (their `environments` is absent or names it), in file order. */
export function testsForEnvironment(config: SuiteConfig, env: string): TestSpec[] {
  return config.tests.filter((test) => test.environments === undefined || test.environments.includes(env));
}

// ── building ────────────────────────────────────────────────────────────────

type Environments = ReadonlyMap<string, EnvironmentConfig>;

function buildSuite(value: unknown, file: string): SuiteConfig {
  if (value === null || value === undefined) fail([], 'the file is empty', 'a mapping with "environments" and "tests"');
  validate(SuiteSchema, value, []);
  const top = value as Static<typeof SuiteSchema>;
  const environments = buildEnvironments(top.environments);
  const dir = path.dirname(file);
  const tests = buildTests(top.tests, { dir }, environments);
  const webhooks = deepFreeze(buildWebhooks(top.webhooks, new Set(environments.keys())));
  const codeHosts = deepFreeze(buildCodeHosts(top, new Set(environments.keys())));
  return Object.freeze({ file, dir, environments: freezeMap(environments), tests: Object.freeze(tests), webhooks, codeHosts });
}

/**
 * The file's tests, in order, each checked and frozen; names unique. With
 * `environments` null (the uploader's side, which does not know the server's
 * environments), the environments a test names and its placeholders are left
 * for the server to check.
 */
export function buildTests(raw: readonly unknown[], base: Omit<BuildContext, 'path'>, environments: Environments | null): TestSpec[] {
  const names = new Map<string, number>();
  return raw.map((entry, index) => {
    const spec = buildTest(entry, { ...base, path: ['tests', index] }, environments);
    const earlier = names.get(spec.name);
    if (earlier !== undefined) {
      fail(['tests', index, 'name'], `duplicate name ${JSON.stringify(spec.name)} (already used by tests[${earlier}])`, 'a name unique in the file');
    }
    names.set(spec.name, index);
    return deepFreeze(spec);
  });
}

function buildEnvironments(raw: Static<typeof SuiteSchema>['environments']): Map<string, EnvironmentConfig> {
  const environments = new Map<string, EnvironmentConfig>();
  for (const [name, declared] of Object.entries(raw)) {
    const variables: Record<string, VariableValue> = {};
    const overrideRules: Record<string, OverrideRule> = {};
    for (const [key, declaration] of Object.entries(declared?.variables ?? {})) {
      const at = ['environments', name, 'variables', key];
      refuseDangerousName(key, at);
      const text = typeof declaration === 'string' ? declaration : declaration.value;
      variables[key] = parseVariableValue(text, typeof declaration === 'string' ? at : [...at, 'value']);
      if (typeof declaration !== 'string' && (declaration.allow !== undefined || declaration.pattern !== undefined)) {
        overrideRules[key] = overrideRuleOf(declaration, at);
      }
    }
    const defaults = CONFIG_DEFAULTS.environment;
    const allowPrivateTargets = declared?.allowPrivateTargets ?? defaults.allowPrivateTargets;
    const allowSuiteUploads = declared?.allowSuiteUploads ?? defaults.allowSuiteUploads;
    const setTimeoutSeconds = setTimeoutOf(declared?.setTimeout ?? defaults.setTimeout, ['environments', name, 'setTimeout']);
    const limits = { maxFailures: declared?.maxFailures ?? null, maxConcurrentSets: declared?.maxConcurrentSets ?? null, setTimeoutSeconds, failOnFlaky: declared?.failOnFlaky ?? defaults.failOnFlaky };
    environments.set(name, deepFreeze({ name, variables, ...limits, allowPrivateTargets, allowSuiteUploads, overrideRules }));
  }
  return environments;
}

/** An environment's setTimeout in whole seconds, from 1s to 7d. */
function setTimeoutOf(text: string, at: DocPath): number {
  const expected = `a duration from 1s to ${setTimeoutText(MAX_SET_TIMEOUT_SECONDS)} (7d) in whole seconds, such as 60m or 2h`;
  let ms: number;
  try {
    ms = parseDuration(text, Number.MAX_SAFE_INTEGER);
  } catch (error) {
    if (error instanceof DurationError) fail(at, `${JSON.stringify(text)} is not a duration`, expected);
    throw error;
  }
  if (ms < 1000 || ms > MAX_SET_TIMEOUT_SECONDS * 1000 || ms % 1000 !== 0) fail(at, `${JSON.stringify(text)} is out of range`, expected);
  return ms / 1000;
}

/** A variable read by a loader, runtime or shell would let an override run code on the workers (dangerous-variables.ts). */
function refuseDangerousName(name: string, at: DocPath): void {
  const reason = dangerousVariableReason(name);
  if (reason === null) return;
  fail(
    at,
    `${name} cannot be declared: ${reason}, so an override of it could run any code on the workers`,
    `a variable your tests read, under a name of its own (APP_ENV, not ENV); never ${refusedVariableNames()}`,
  );
}

function overrideRuleOf(declaration: { allow?: string[]; pattern?: string }, at: DocPath): OverrideRule {
  const rule: OverrideRule = { allow: [...(declaration.allow ?? [])], pattern: declaration.pattern ?? null };
  const problem = ruleSyntaxError(rule);
  if (problem !== null) fail([...at, 'pattern'], problem, 'a JavaScript regular expression (matched against the whole override value)');
  return rule;
}

/** `${env:NAME}` as the whole value is a reference to the server's environment (a secret); anything else is plain. */
function parseVariableValue(text: string, at: DocPath): VariableValue {
  const ref = ENV_REFERENCE.exec(text);
  if (ref) return { kind: 'env', name: ref[1] as string };
  if (text.includes('${env:')) {
    // Half a reference would silently become a literal "${env:…}" string sent to the target.
    fail(
      at,
      `${describeValue(text)} has a "\${env:…}" reference that is not the whole value`,
      'either a plain string or exactly "${env:NAME}" with NAME made of letters, digits and _',
    );
  }
  return { kind: 'plain', value: text };
}

function buildTest(raw: unknown, ctx: BuildContext, environments: Environments | null): TestSpec {
  if (!isMapping(raw)) fail(ctx.path, `got ${describeValue(raw)}`, 'a test: a mapping with name, type and the keys of that type');
  const types = TEST_TYPE_NAMES.map((name) => JSON.stringify(name)).join(', ');
  if (!Object.hasOwn(raw, 'type')) fail([...ctx.path, 'type'], 'missing', `one of ${types}`);
  if (!isTestType(raw.type)) {
    const problem = typeof raw.type === 'string' ? `unknown test type ${JSON.stringify(raw.type)}` : `got ${describeValue(raw.type)}`;
    fail([...ctx.path, 'type'], problem, `one of ${types}`);
  }
  const definition = TEST_TYPES[raw.type] as TestTypeDefinition;
  definition.precheck?.(raw, ctx);
  validate(testSchema(raw.type), raw, ctx.path);
  const spec = definition.build(raw, commonOf(raw as CommonRaw), ctx);
  if (environments !== null) {
    checkEnvironmentNames(spec, ctx.path, environments);
    checkPlaceholders(definition, spec, ctx.path, environments);
  }
  return spec;
}

type CommonRaw = Static<TObject<typeof CommonTestProperties>>;

function commonOf(raw: CommonRaw): TestCommon {
  const common: TestCommon = {
    name: raw.name,
    tags: [...(raw.tags ?? [])],
    timeoutSeconds: raw.timeoutSeconds ?? CONFIG_DEFAULTS.test.timeoutSeconds,
    retries: raw.retries ?? CONFIG_DEFAULTS.test.retries,
  };
  if (raw.environments !== undefined) common.environments = [...raw.environments];
  return common;
}

function checkEnvironmentNames(spec: TestSpec, at: DocPath, environments: Environments): void {
  const declared = [...environments.keys()];
  spec.environments?.forEach((name, index) => {
    if (!environments.has(name)) {
      fail([...at, 'environments', index], `unknown environment ${JSON.stringify(name)}`, `one of the declared environments: ${declared.join(', ')}`);
    }
  });
}

/** Every `{{NAME}}` must be declared in every environment the test runs in: a typo fails at load, not at 3 a.m. */
function checkPlaceholders(definition: TestTypeDefinition, spec: TestSpec, at: DocPath, environments: Environments): void {
  const runsIn = (spec.environments ?? [...environments.keys()]).map((name) => environments.get(name) as EnvironmentConfig);
  for (const { path: inner, text } of definition.templated?.(spec) ?? []) {
    for (const placeholder of findPlaceholders(text)) {
      const where = [...at, ...inner];
      const name = placeholder.name;
      if (name === undefined) fail(where, `malformed placeholder ${placeholder.raw}`, '{{NAME}} with NAME made of letters, digits and _');
      const lacking = runsIn.filter((env) => !Object.hasOwn(env.variables, name)).map((env) => env.name);
      if (lacking.length === 0) continue;
      const common = Object.keys(runsIn[0]?.variables ?? {}).filter((key) => runsIn.every((env) => Object.hasOwn(env.variables, key)));
      fail(
        where,
        `${placeholder.raw} is not declared in environment ${lacking.map((env) => JSON.stringify(env)).join(', ')}`,
        `a variable declared in every environment the test runs in (${common.length > 0 ? `declared in all: ${common.join(', ')}` : 'none is declared in all'}); ` +
          `declare ${name} in ${lacking.join(', ')}` +
          (lacking.length < runsIn.length ? `, or give the test an "environments:" list without ${lacking.join(', ')}` : ''),
      );
    }
  }
}

// ── validation plumbing ─────────────────────────────────────────────────────

const validators = new Map<TSchema, Validator>();

/** Validates with the compiled TypeBox validator; on failure, explains the first problem. */
export function validate(schema: TSchema, value: unknown, at: DocPath): void {
  let validator = validators.get(schema);
  if (!validator) validators.set(schema, (validator = Compile(schema)));
  if (validator.Check(value)) return;
  const failure = explain(schema, value, at) ?? fallbackFailure(validator, value, at);
  throw new FailureSignal(failure);
}

/** Should explain() ever miss what the validator saw, still report something precise-ish. */
function fallbackFailure(validator: Validator, value: unknown, at: DocPath): Failure {
  const first = validator.Errors(value)[0];
  const inner = (first?.instancePath ?? '').split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  return {
    path: [...at, ...inner],
    problem: first?.message ?? 'invalid',
    expected: 'a valid value (see the documentation of runset.config.yaml)',
  };
}

// ── errors and freezing ─────────────────────────────────────────────────────

function yamlSyntaxError(error: YAMLError, file: string): ConfigError {
  const position = error.linePos?.[0];
  const firstLine = error.message.split('\n')[0] ?? error.message;
  const problem = firstLine.replace(/ at line \d+, column \d+:?$/, '');
  const expected: Record<string, string> = {
    DUPLICATE_KEY: 'each key at most once in a mapping',
    MULTIPLE_DOCS: 'a single YAML document (remove the extra "---")',
    TAB_AS_INDENT: 'indentation with spaces, not tabs',
  };
  return new ConfigError({
    file,
    path: position ? `line ${position.line}, column ${position.col}` : '(YAML)',
    problem: error.code === 'MULTIPLE_DOCS' ? 'more than one YAML document' : `invalid YAML: ${problem}`,
    expected: expected[error.code] ?? 'valid YAML (check indentation, quotes and brackets)',
    line: position?.line,
  });
}

function toConfigError(failure: Failure, file: string, doc: Document, lineCounter: LineCounter): ConfigError {
  const { path: at, problem, expected } = failure;
  return new ConfigError({ file, path: formatPath(at), problem, expected, line: lineOf(at, doc, lineCounter) });
}

/** The line of the node at `at`, or of its nearest ancestor present in the document (for a missing key). */
function lineOf(at: DocPath, doc: Document, lineCounter: LineCounter): number | undefined {
  for (let length = at.length; length >= 0; length--) {
    const node = length === 0 ? doc.contents : doc.getIn(at.slice(0, length), true);
    if (isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line;
  }
  return undefined;
}

/** Freezes a parsed value and everything in it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** A Map cannot be frozen by Object.freeze: its writers are replaced so a shared config cannot drift. */
function freezeMap<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  const refuse = (): never => {
    throw new TypeError('SuiteConfig.environments is read-only');
  };
  map.set = refuse;
  map.delete = refuse;
  map.clear = refuse;
  return Object.freeze(map);
}
