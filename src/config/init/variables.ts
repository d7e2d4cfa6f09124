/**
 * `runset init`'s search for the variables a suite reads, so the written
 * config declares them: `process.env.NAME`, `process.env['NAME']`,
 * `import.meta.env.NAME` and destructuring of either in JS/TS (./js-reads.ts),
 * `os.environ['NAME']`, `os.environ.get('NAME')` and `os.getenv('NAME')` in
 * Python, `{{NAME}}` in a Postman collection. Bounded: the files that made the
 * suite, then its test folder at most TEST_DEPTH deep, MAX_SCANNED_FILES in
 * all, none larger than MAX_FILE_BYTES (./source-text.ts).
 *
 * Names a runner, CI or the OS sets (CI, NODE_ENV, GITHUB_*) are left to the
 * worker's environment, and names the loader refuses (dangerous-variables.ts)
 * or cannot declare are left out: they are reported apart, never declared.
 */
import path from 'node:path';
import { globSync } from 'tinyglobby';
import { VARIABLE_NAME } from '../../executors/template.js';
import { dangerousVariableReason } from '../dangerous-variables.js';
import { jsReads } from './js-reads.js';
import { readSmallFile, withoutComments } from './source-text.js';
import { SKIPPED_FOLDERS, type FoundSuite } from './suites.js';

/** Files read for variables, all suites together. */
export const MAX_SCANNED_FILES = 300;
/** How deep under a suite's test folder files are read. */
const TEST_DEPTH = 3;

/** Read by runners, CI or the OS rather than the suite's own settings: the worker's environment provides them. */
const AMBIENT = /^(CI|NODE_ENV|HOME|PATH|PWD|USER|SHELL|TERM|LANG|TZ|TMPDIR|TEMP|DEBUG|PWDEBUG|JEST_WORKER_ID|TEST_WORKER_INDEX|TEST_PARALLEL_INDEX|(PW|PWTEST|GITHUB|GITLAB|RUNNER|npm|VITEST|PYTEST)_\w*|PLAYWRIGHT_(BROWSERS_PATH|SKIP_BROWSER_DOWNLOAD|HTML_\w+|JSON_\w+|JUNIT_\w+|BLOB_\w+)|VITEST)$/;

/** A variable found, with where it is read and the fallback the code gives it, if any. */
export interface FoundVariable {
  name: string;
  /** The first default found beside a read (`process.env.BASE_URL ?? 'http://localhost:3000'`, a collection variable's value). */
  fallback?: string;
  /** The absolute file that gives `fallback`. */
  fallbackFrom?: string;
  /** Absolute files reading it, in the order found. */
  readBy: string[];
}

export interface FoundVariables {
  declared: FoundVariable[];
  /** Names read but not declared: ambient, refused or not a valid name. */
  leftOut: string[];
  /** Files read. */
  scanned: number;
}

const PY_READS = [
  /\b(?:os\.)?environ\[\s*(['"])([^'"\n]+)\1\s*\]/g,
  /\b(?:os\.environ\.get|os\.getenv|getenv)\(\s*(['"])([^'"\n]+)\1(?:\s*,\s*(['"])([^'"\n]*)\3)?/g,
];
const JS_FILES = '**/*.{js,cjs,mjs,ts,cts,mts,jsx,tsx}';

/** The variables the suites read, in the order first found. */
export function findVariables(suites: readonly FoundSuite[]): FoundVariables {
  const found = new Map<string, FoundVariable>();
  const leftOut = new Set<string>();
  const note = (name: string, file: string, fallback?: string): void => {
    if (!VARIABLE_NAME.test(name) || AMBIENT.test(name) || dangerousVariableReason(name) !== null) {
      leftOut.add(name);
      return;
    }
    const known = found.get(name) ?? { name, readBy: [] };
    if (!known.readBy.includes(file)) known.readBy.push(file);
    if (known.fallback === undefined && fallback !== undefined && fallback !== '') Object.assign(known, { fallback, fallbackFrom: file });
    found.set(name, known);
  };
  const seen = new Set<string>();
  for (const file of filesToScan(suites)) {
    if (seen.size >= MAX_SCANNED_FILES) break;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readSmallFile(file);
    if (text !== undefined) readsOf(file, text, note);
  }
  return { declared: [...found.values()], leftOut: [...leftOut].sort(), scanned: seen.size };
}

/** Each suite's own files first (every config before any test file), then its test folder. */
function filesToScan(suites: readonly FoundSuite[]): string[] {
  const own = suites.flatMap((suite) => suite.files.filter((file) => !file.endsWith('package.json')));
  const tests = suites.flatMap((suite) => {
    if (suite.type === 'newman') return [];
    const folder = suite.playwright?.testDir ?? suite.dir;
    const pattern = suite.type === 'pytest' ? '**/*.py' : JS_FILES;
    return globSync(pattern, { cwd: folder, absolute: true, deep: TEST_DEPTH, ignore: [...SKIPPED_FOLDERS], followSymbolicLinks: false }).sort();
  });
  return [...own, ...tests];
}

function readsOf(file: string, text: string, note: (name: string, file: string, fallback?: string) => void): void {
  if (file.endsWith('.postman_collection.json')) return collectionReads(file, text, note);
  if (file.endsWith('.py')) {
    for (const pattern of PY_READS) for (const m of withoutComments(text, true).matchAll(pattern)) note(m[2] as string, file, m[4]);
    return;
  }
  if (!/\.[cm]?[jt]sx?$/.test(file)) return; // a JSON, YAML, INI or TOML config names no variable
  for (const read of jsReads(withoutComments(text))) note(read.name, file, read.fallback);
}

/** `{{NAME}}` in a collection; its own `variable` list gives fallbacks. Postman's dynamic `{{$guid}}` is not a variable. */
function collectionReads(file: string, text: string, note: (name: string, file: string, fallback?: string) => void): void {
  const defaults = new Map<string, string>();
  try {
    const parsed = JSON.parse(text) as { variable?: Array<{ key?: unknown; value?: unknown }> };
    for (const v of Array.isArray(parsed.variable) ? parsed.variable : []) {
      if (typeof v.key === 'string' && typeof v.value === 'string') defaults.set(v.key, v.value);
    }
  } catch {
    return; // not JSON: the loader's listing will say so
  }
  for (const m of text.matchAll(/\{\{\s*([^{}\s]+)\s*\}\}/g)) {
    const name = m[1] as string;
    if (!name.startsWith('$')) note(name, file, defaults.get(name));
  }
}

/** Whether a name looks like a credential: declared as `${env:NAME}`, read from the server's environment and masked. */
export function looksSecret(name: string): boolean {
  return /(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|API_?KEY|PRIVATE_KEY|AUTH)/i.test(name);
}

/** `file` relative to `dir`, with / separators, for the config's comments. */
export function relativeTo(dir: string, file: string): string {
  return path.relative(dir, file).split(path.sep).join('/') || '.';
}
