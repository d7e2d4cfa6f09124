/**
 * Member names once Playwright entries are listed. A case is named
 * `file › describe › title`; two entries over one folder (a smoke `grep` for
 * prod, all of it for staging) list the same cases under the same names.
 *
 * A name must be unique in a set — a set is one environment — because a member
 * and its test history are found by name and environment. So the rule is per
 * environment:
 *
 * - an entry with a case named like another test that runs in an environment
 *   they share names ALL its cases `entry › file › …` (all, not just the
 *   clashing ones, so one entry's cases read alike and do not change name when
 *   a case is added to the other entry);
 * - otherwise names stay bare. A config that loads today has no clash, so every
 *   name (and the history kept under it) stays as it was; and entries over
 *   disjoint environments keep the suite's own names, so prod's smoke cases and
 *   staging's full run show one test under one name.
 *
 * `http` and `command` tests are named by their entry, unique in the file, so
 * only listed cases (Playwright's, a framework entry's) ever take a prefix. What still clashes (two cases of one
 * entry, or a prefixed name someone also gave an http test) is a config error.
 */
import path from 'node:path';
import { listedEntryOf } from '../core/batch.js';
import type { TestSpec } from '../core/types.js';
import { NAME_SEPARATOR } from '../executors/listed-case.js';
import { ConfigError, testsForEnvironment, type SuiteConfig } from './suite.js';


/** `tests` with the clashing entries' cases prefixed by their entry name; throws a ConfigError if names still clash. */
export function nameCases(config: SuiteConfig, tests: readonly TestSpec[]): TestSpec[] {
  const prefixed = clashingEntries(tests);
  const named = tests.map((test) => {
    const entry = listedEntryOf(test);
    return entry !== undefined && prefixed.has(entry) ? { ...test, name: `${entry}${NAME_SEPARATOR}${test.name}` } : test;
  });
  checkUniquePerEnvironment({ ...config, tests: named });
  return named;
}

/** Entry names of the Playwright entries with a case named like another test that shares an environment with it. */
function clashingEntries(tests: readonly TestSpec[]): Set<string> {
  const byName = new Map<string, TestSpec[]>();
  for (const test of tests) byName.set(test.name, [...(byName.get(test.name) ?? []), test]);
  const entries = new Set<string>();
  for (const same of byName.values()) {
    same.forEach((a, i) =>
      same.slice(i + 1).forEach((b) => {
        if (!shareEnvironment(a, b) || entryOf(a) === entryOf(b)) return;
        for (const test of [a, b]) {
          const entry = listedEntryOf(test);
          if (entry !== undefined) entries.add(entry);
        }
      }),
    );
  }
  return entries;
}

/** The config entry a test comes from: its listing entry for a case, else its own name. */
function entryOf(test: TestSpec): string {
  return listedEntryOf(test) ?? test.name;
}

/** No `environments` means every environment. */
function shareEnvironment(a: TestSpec, b: TestSpec): boolean {
  return a.environments === undefined || b.environments === undefined || a.environments.some((env) => b.environments?.includes(env));
}

function checkUniquePerEnvironment(config: SuiteConfig): void {
  for (const env of config.environments.keys()) {
    const seen = new Set<string>();
    for (const test of testsForEnvironment(config, env)) {
      if (!seen.has(test.name)) {
        seen.add(test.name);
        continue;
      }
      throw new ConfigError({
        file: config.file,
        path: `tests (${path.basename(config.file)})`,
        problem: `two tests of environment ${JSON.stringify(env)} are both named ${JSON.stringify(test.name)} once the suites are listed into their cases`,
        expected: 'unique names in each environment: rename the test, or narrow a Playwright entry with grep or project, a framework entry with its args',
      });
    }
  }
}
