/**
 * What a test process gets from the worker that starts it: the one rule for
 * every spawner (commands, the command launcher, Playwright and so its browsers).
 *
 * A test's environment is the worker's own environment
 *   - minus every RUNSET_* variable (runset's settings: database URL, keys, key file…),
 *   - minus PGPASSWORD and PGPASSFILE (the PostgreSQL driver reads the store's password there),
 *   - minus every variable whose value holds one of the worker's credentials
 *     (the database URL or its password, the secret key, an API key), whatever
 *     its name: an operator's DATABASE_URL=… copy is caught too,
 * plus, under --run-as, the user's HOME, USER and LOGNAME,
 * plus the set's variables, which the suite declares and so passes deliberately,
 * and, for a process started in a suite's folder (suiteEnvironment), that
 * folder's `node_modules/.bin` and each one above it first on PATH, as
 * `npm run` and `npx` put them: a webServer command or script names the
 * suite's own tools (`cross-env`, `vite`) as it would in the suite's checkout.
 * PATH itself is never a set's variable (a dangerous name): only this rule
 * changes it.
 */
import path from 'node:path';
import type { Containment } from './containment.js';
import { identityVariables, type RunAsUser } from './run-as.js';

/** Who test processes run as, and which values must never reach them. */
export interface TestProcessPolicy {
  /** The OS user every test process runs as; undefined: the worker's own user. */
  readonly runAs?: RunAsUser;
  /** The worker's credentials as they may appear in its environment (never sent anywhere). */
  readonly credentials?: readonly string[];
  /** How every process a test starts is ended with it (./containment.ts); undefined: process groups only. */
  readonly containment?: Containment;
}

/** The policy for one member's processes: the user it was given (a slot's, under --run-as) when it has one. */
export function memberPolicy(policy: TestProcessPolicy, runAs: RunAsUser | undefined): TestProcessPolicy {
  return runAs ? { ...policy, runAs } : policy;
}

/** Variables dropped by name, whatever their value. */
const DROPPED_NAMES: ReadonlySet<string> = new Set(['PGPASSWORD', 'PGPASSFILE']);
/** A shorter "credential" would match ordinary values by accident (a password `x`). */
const MIN_CREDENTIAL_LENGTH = 8;

/**
 * The credentials a worker holds, as they may appear in an environment: each
 * given value, and the password inside a database URL.
 */
export function credentialValues(values: ReadonlyArray<string | undefined>): string[] {
  const found = new Set<string>();
  for (const value of values) {
    if (!value) continue;
    found.add(value);
    try {
      const password = decodeURIComponent(new URL(value).password);
      if (password) found.add(password);
    } catch {
      // not a URL: the value alone
    }
  }
  return [...found].filter((v) => v.length >= MIN_CREDENTIAL_LENGTH);
}

/** The worker's environment as any process it starts for tests may see it (no variables, no identity). */
export function scrubbedEnvironment(policy: TestProcessPolicy = {}, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const credentials = policy.credentials ?? [];
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (name.startsWith('RUNSET_') || DROPPED_NAMES.has(name)) continue;
    if (value !== undefined && credentials.some((c) => value.includes(c))) continue;
    env[name] = value;
  }
  return env;
}

/** The environment of one test process: see the rule above. */
export function testEnvironment(
  variables: Readonly<Record<string, string>>,
  policy: TestProcessPolicy = {},
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return Object.assign(scrubbedEnvironment(policy, base), identityVariables(policy.runAs), variables);
}

/**
 * The environment of a test process started in the suite folder `dir`: a
 * test's (above) made from `base`, its tools first on PATH.
 */
export function suiteEnvironment(
  dir: string,
  variables: Readonly<Record<string, string>>,
  policy: TestProcessPolicy = {},
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env = testEnvironment(variables, policy, base);
  env.PATH = suiteBinPath(dir, env.PATH);
  return env;
}

/** npm's order: `dir`'s node_modules/.bin, then its parent's, up to the file system's root, then `rest`. */
export function suiteBinPath(dir: string, rest: string | undefined): string {
  const bins: string[] = [];
  for (let folder = path.resolve(dir); ; folder = path.dirname(folder)) {
    bins.push(path.join(folder, 'node_modules', '.bin'));
    if (path.dirname(folder) === folder) break;
  }
  return [...bins, ...(rest ? [rest] : [])].join(path.delimiter);
}
