/**
 * `runset init`'s search for a repository's test suites: which files mark a
 * suite of which `type:` (the loader's own names, ./../suite-test-types.ts),
 * and what a Playwright config says of its projects, its `webServer` and its
 * test folder. Static reading only: nothing of the repository is run, so
 * init works before any `npm install`. The rules, one folder one entry per type:
 *
 * - playwright: playwright.config.{ts,js,mts,mjs,cts,cjs} (Playwright's own names)
 * - vitest: vitest.config.* or vitest.workspace.*, a vite.config.* with a `test:` section, or a package.json script running vitest
 * - jest: jest.config.*, or package.json with a "jest" key or a script running jest
 * - mocha: .mocharc.*, or package.json with a "mocha" key or a script running mocha
 * - cucumber: cucumber.{js,cjs,mjs,json,yaml,yml}, or a script running cucumber-js
 * - pytest: pytest.ini, pyproject.toml with [tool.pytest.ini_options], setup.cfg with [tool:pytest], tox.ini with [pytest];
 *   else the shallowest conftest.py
 * - newman: *.postman_collection.json (one entry per collection)
 *
 * Folders never searched: node_modules, .git and every other dot-folder,
 * build output (dist, build, coverage), Python environments; at most MAX_DEPTH deep.
 */
import path from 'node:path';
import { globSync } from 'tinyglobby';
import type { TestType } from '../../core/types.js';
import { PLAYWRIGHT_CONFIG_NAMES } from '../suite-playwright.js';
import { readSmallFile, withoutComments } from './source-text.js';

/** Folders deeper than this under the repository are not searched. */
const MAX_DEPTH = 6;

export const SKIPPED_FOLDERS = Object.freeze(['**/node_modules/**', '**/.*/**', '**/dist/**', '**/build/**', '**/coverage/**', '**/venv/**', '**/__pycache__/**', '**/site-packages/**']);

/** A suite found: its type as the loader spells it, its folder, and what it was found by. */
export interface FoundSuite {
  type: Exclude<TestType, 'http' | 'command'>;
  /** Absolute folder: the entry's `dir`. */
  dir: string;
  /** Absolute files that made it a suite (its config, its package.json, its collection). */
  files: string[];
  /** Newman: the collection's file name, relative to `dir`. */
  collection?: string;
  playwright?: PlaywrightFacts;
}

/** What a Playwright config says, read from its text. */
export interface PlaywrightFacts {
  projects: string[];
  /** The webServer's command, '' when it has one whose command is not a plain string; undefined without one. */
  webServer?: string;
  /** Absolute folder of its tests (`testDir`, else the config's folder). */
  testDir: string;
}

type FileRule = { type: FoundSuite['type']; matches: (name: string) => boolean; confirms?: (text: string) => boolean };

const FILE_RULES: readonly FileRule[] = [
  { type: 'playwright', matches: (name) => PLAYWRIGHT_CONFIG_NAMES.includes(name) },
  { type: 'vitest', matches: (name) => /^vitest\.(config|workspace)\.[cm]?[jt]s$/.test(name) },
  { type: 'vitest', matches: (name) => /^vite\.config\.[cm]?[jt]s$/.test(name), confirms: (text) => /\btest\s*:\s*\{/.test(withoutComments(text)) },
  { type: 'jest', matches: (name) => /^jest\.config\.([cm]?[jt]s|json)$/.test(name) },
  { type: 'mocha', matches: (name) => /^\.mocharc\.(js|cjs|mjs|json|jsonc|yaml|yml)$/.test(name) },
  { type: 'cucumber', matches: (name) => /^cucumber\.(js|cjs|mjs|json|yaml|yml)$/.test(name) },
  { type: 'pytest', matches: (name) => name === 'pytest.ini' },
  { type: 'pytest', matches: (name) => name === 'pyproject.toml', confirms: (text) => /^\[tool\.pytest\.ini_options\]/m.test(text) },
  { type: 'pytest', matches: (name) => name === 'setup.cfg', confirms: (text) => /^\[tool:pytest\]/m.test(text) },
  { type: 'pytest', matches: (name) => name === 'tox.ini', confirms: (text) => /^\[pytest\]/m.test(text) },
  { type: 'newman', matches: (name) => name.endsWith('.postman_collection.json') },
];

/** Globs of every name FILE_RULES may match, so the search returns candidates only. */
const CANDIDATE_FILES = ['**/playwright.config.*', '**/vitest.config.*', '**/vitest.workspace.*', '**/vite.config.*', '**/jest.config.*', '**/.mocharc.*', '**/cucumber.*', '**/pytest.ini', '**/conftest.py', '**/pyproject.toml', '**/setup.cfg', '**/tox.ini', '**/*.postman_collection.json', '**/package.json'];

/** package.json: a framework's key, or a script (`test`, `test:unit`, …) that runs it. */
const PACKAGE_RULES: ReadonlyArray<{ type: FoundSuite['type']; key?: string; script: RegExp }> = [
  { type: 'vitest', script: /^(npx )?vitest\b/ },
  { type: 'jest', key: 'jest', script: /^(npx )?jest\b/ },
  { type: 'mocha', key: 'mocha', script: /^(npx )?mocha\b/ },
  { type: 'cucumber', script: /^(npx )?cucumber-js\b/ },
];

/** Every suite under `root`, in folder order then type order; folders shallower first. */
export function findSuites(root: string): FoundSuite[] {
  const files = globSync(CANDIDATE_FILES, { cwd: root, absolute: true, dot: true, deep: MAX_DEPTH, ignore: [...SKIPPED_FOLDERS], followSymbolicLinks: false }).sort();
  const found = new Map<string, FoundSuite>();
  const add = (type: FoundSuite['type'], file: string, extra: Partial<FoundSuite> = {}): void => {
    const dir = path.dirname(file);
    const key = type === 'newman' ? `${type}:${file}` : `${type}:${dir}`;
    const known = found.get(key);
    if (known) known.files.push(file);
    else found.set(key, { type, dir, files: [file], ...extra });
  };
  for (const file of files) {
    const name = path.basename(file);
    if (name === 'package.json') {
      for (const type of packageSuites(file)) add(type, file);
      continue;
    }
    const rule = FILE_RULES.find((r) => r.matches(name));
    if (rule === undefined) continue;
    if (rule.confirms && !rule.confirms(readSmallFile(file) ?? '')) continue;
    if (rule.type === 'playwright') {
      // Several configs in one folder: Playwright (and the loader) take the first of its names.
      if (found.has(`playwright:${path.dirname(file)}`)) continue;
      const used = PLAYWRIGHT_CONFIG_NAMES.map((n) => path.join(path.dirname(file), n)).find((f) => files.includes(f)) ?? file;
      add('playwright', used, { playwright: readPlaywrightConfig(used) });
    } else {
      add(rule.type, file, rule.type === 'newman' ? { collection: name } : {});
    }
  }
  // A conftest.py marks a pytest suite only where no pytest config or shallower conftest.py does: pytest reads nested ones itself.
  for (const file of files.filter((f) => path.basename(f) === 'conftest.py').sort((a, b) => depth(a) - depth(b))) {
    const dir = path.dirname(file);
    const covered = [...found.values()].some((suite) => suite.type === 'pytest' && (dir === suite.dir || dir.startsWith(suite.dir + path.sep)));
    if (!covered) add('pytest', file);
  }
  return [...found.values()].sort((a, b) => depth(a.dir) - depth(b.dir) || a.dir.localeCompare(b.dir) || typeOrder(a.type) - typeOrder(b.type) || (a.collection ?? '').localeCompare(b.collection ?? ''));
}

function depth(dir: string): number {
  return dir.split(path.sep).length;
}

const TYPE_ORDER: readonly string[] = ['playwright', 'vitest', 'jest', 'mocha', 'cucumber', 'pytest', 'newman'];
function typeOrder(type: string): number {
  return TYPE_ORDER.indexOf(type);
}

/** The frameworks a package.json sets up: by its own key, or by a script. */
function packageSuites(file: string): Array<FoundSuite['type']> {
  let manifest: { scripts?: Record<string, unknown> } & Record<string, unknown>;
  try {
    manifest = JSON.parse(readSmallFile(file) ?? 'null') as typeof manifest;
  } catch {
    return [];
  }
  if (manifest === null || typeof manifest !== 'object') return [];
  const scripts = Object.values(manifest.scripts ?? {}).filter((script): script is string => typeof script === 'string').map((script) => script.trim());
  return PACKAGE_RULES.filter((rule) => (rule.key !== undefined && Object.hasOwn(manifest, rule.key)) || scripts.some((script) => rule.script.test(script))).map((rule) => rule.type);
}

/** Projects, webServer and testDir of a Playwright config, from its text (its comments left out). */
export function readPlaywrightConfig(file: string): PlaywrightFacts {
  const text = withoutComments(readSmallFile(file) ?? '');
  const testDir = /\btestDir\s*:\s*(['"`])([^'"`\n]+)\1/.exec(text)?.[2];
  const facts: PlaywrightFacts = { projects: projectNames(text), testDir: path.resolve(path.dirname(file), testDir ?? '.') };
  const server = /\bwebServer\s*:/.exec(text);
  if (server) facts.webServer = /\bcommand\s*:\s*(['"`])([^'"`\n]+)\1/.exec(text.slice(server.index))?.[2] ?? '';
  return facts;
}

/** The `name:` strings of the `projects: [...]` list, in order (not those of nested objects such as `use`). */
function projectNames(text: string): string[] {
  const start = /\bprojects\s*:\s*\[/.exec(text);
  if (!start) return [];
  const names: string[] = [];
  let level = 0;
  // Walk the list's brackets: a name counts at the depth of a project's own object (list [ then object {).
  for (let i = start.index + start[0].length - 1; i < text.length; i++) {
    const ch = text[i];
    if (ch === '[' || ch === '{' || ch === '(') level++;
    else if (ch === ']' || ch === '}' || ch === ')') {
      if (--level === 0) break;
    } else if (level === 2 && text.startsWith('name', i) && !/\w/.test(text[i - 1] ?? '')) {
      const named = /^name\s*:\s*(['"`])([^'"`\n]+)\1/.exec(text.slice(i));
      if (named) names.push(named[2] as string);
    }
  }
  return names;
}
