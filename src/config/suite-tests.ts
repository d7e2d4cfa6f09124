/**
 * The tests-only parse of an uploaded suite version's runset.config.yaml: a
 * version brings tests only, so its `environments` and `webhooks` keys are
 * ignored and the server's environments are used instead (src/core/suites.ts).
 * Paths a test names must stay inside the version's folder; with `file` at
 * `${VERSION_ROOT}/runset.config.yaml` every planned path is under VERSION_ROOT,
 * which a worker maps to its unpacked copy. The folder is not on this machine:
 * its paths are checked against the archive's list of files.
 */
import path from 'node:path';
import { Type } from '../core/typebox.js';
import type { EnvironmentConfig } from '../core/types.js';
import { buildTests, deepFreeze, parseSuiteYaml, validate, type SuiteConfig } from './suite.js';
import { fail } from './suite-error.js';
import type { SuiteFiles } from './test-type.js';
import { NO_CODE_HOSTS } from '../core/code-hosts.js';

/** The top of an uploaded file: `tests`, and keys read elsewhere or by nobody. */
const TestsOnlySchema = Type.Object(
  {
    environments: Type.Optional(Type.Unknown()),
    tests: Type.Array(Type.Unknown(), { description: 'a list of tests, each a mapping with name and type' }),
    webhooks: Type.Optional(Type.Unknown()),
    github: Type.Optional(Type.Unknown()),
    gitlab: Type.Optional(Type.Unknown()),
  },
  {
    additionalProperties: false,
    patternProperties: { '^x-': Type.Unknown() },
    keyDescription: 'or an x-… key for your own anchors',
    description: 'a mapping with "tests" (an uploaded suite brings tests only; its "environments", "webhooks", "github" and "gitlab" are ignored)',
  },
);

const SERVER_ONLY_KEYS = ['environments', 'webhooks', 'github', 'gitlab'] as const;
type ServerOnlyKey = (typeof SERVER_ONLY_KEYS)[number];

/** Environments: the server's (the map given); webhooks and code hosts: none; tests: the file's. */
export interface SuiteTests extends SuiteConfig {
  /** Keys of the file that were ignored because they belong to the server (`environments`, `webhooks`, `github`, `gitlab`), so a caller can say so once. */
  readonly ignored: ReadonlyArray<ServerOnlyKey>;
}

/**
 * Parses `text` as the tests of a version whose root is `file`'s folder. With
 * `environments` null (the uploader, which does not know the server's), the
 * environments a test names and its placeholders are left to the server.
 * `files`: the version's paths relative to its root, as its archive lists them
 * (SuiteInspection.paths; folders end in `/`), or 'disk' where the folder is
 * on this machine (the uploader's checkout).
 */
export function parseSuiteTests(text: string, file: string, environments: ReadonlyMap<string, EnvironmentConfig> | null, files: Iterable<string> | 'disk'): SuiteTests {
  return parseSuiteYaml(text, file, (value, absolute) => {
    if (value === null || value === undefined) fail([], 'the file is empty', 'a mapping with "tests"');
    validate(TestsOnlySchema, value, []);
    const top = value as { tests: unknown[] };
    const ignored = SERVER_ONLY_KEYS.filter((key) => Object.hasOwn(top, key));
    const dir = path.dirname(absolute);
    const lookup = files === 'disk' ? undefined : archiveFiles(dir, files);
    const tests = buildTests(top.tests, { dir, root: dir, ...(lookup ? { files: lookup } : {}) }, environments);
    return Object.freeze({
      file: absolute,
      dir,
      environments: environments ?? new Map<string, EnvironmentConfig>(),
      tests: Object.freeze(tests),
      webhooks: deepFreeze([]),
      codeHosts: NO_CODE_HOSTS,
      ignored: Object.freeze(ignored),
    });
  });
}

/** The archive's list as SuiteFiles rooted at `root`: a folder is any path with something under it, or listed as one. */
function archiveFiles(root: string, relative: Iterable<string>): SuiteFiles {
  const files = new Set<string>();
  const folders = new Set<string>([root]);
  for (const entry of relative) {
    const clean = entry.replace(/^\.\//, '').replace(/\/+$/, '');
    if (clean === '' || clean === '.') continue;
    const absolute = path.posix.join(root, clean);
    if (entry.endsWith('/')) folders.add(absolute);
    else files.add(absolute);
    for (let parent = path.posix.dirname(absolute); parent.startsWith(root) && parent !== root; parent = path.posix.dirname(parent)) folders.add(parent);
  }
  return { isFolder: (absolute) => folders.has(absolute), isFile: (absolute) => files.has(absolute) };
}
