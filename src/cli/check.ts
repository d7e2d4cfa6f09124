/**
 * `runset check [-c FILE] [--no-list]`: loads a config exactly as `serve`
 * does (the same loadSuite, the same listing of Playwright and framework
 * entries, the same ConfigError on stderr and exit 2), then prints, per
 * environment, the tests a set of it would run. Nothing is started: no store,
 * no server, no worker, so it fits a pre-commit hook. Listing an entry spawns
 * its framework; `--no-list` skips that and checks the file alone.
 */
import { Command, Option } from 'commander';
import { listedEntryOf } from '../core/batch.js';
import type { TestSpec } from '../core/types.js';
import { DEFAULTS, resolvePath } from '../config/options.js';
import type { SuiteConfig } from '../config/suite.js';

interface CheckFlags {
  config: string;
  /** false from --no-list. */
  list: boolean;
}

/** Consecutive tests of one listed entry, or a test on its own. */
interface Group {
  title: string;
  tests: TestSpec[];
}

function groupsOf(tests: readonly TestSpec[]): Group[] {
  const groups: Group[] = [];
  let open: { entry: string; group: Group } | undefined;
  for (const test of tests) {
    const entry = listedEntryOf(test);
    if (entry !== undefined && open?.entry === entry) {
      open.group.tests.push(test);
      continue;
    }
    const group = { title: entry ?? test.name, tests: [test] };
    groups.push(group);
    open = entry === undefined ? undefined : { entry, group };
  }
  return groups;
}

/** A Playwright or framework entry as the file declares it, before listing turns it into its cases. */
function isUnlistedEntry(test: TestSpec): boolean {
  return test.type !== 'http' && test.type !== 'command' && listedEntryOf(test) === undefined;
}

function plural(n: number, word: string): string {
  return `${n} ${n === 1 ? word : word.replace(/y$/, 'ie')}${n === 1 ? '' : 's'}`;
}

/** What `check` prints: per environment, its tests, a listed entry's cases under the entry. */
export function describeSuite(config: SuiteConfig, listed: boolean, testsOf: (env: string) => TestSpec[]): string {
  const lines: string[] = [];
  for (const env of config.environments.keys()) {
    const tests = testsOf(env);
    // Without listing, an entry stands for cases not yet known: it is counted apart, never as one test.
    const unlisted = listed ? 0 : tests.filter((test) => isUnlistedEntry(test)).length;
    lines.push(`${env}: ${plural(tests.length - unlisted, 'test')}${unlisted > 0 ? ` and ${plural(unlisted, 'entry')} not listed` : ''}`);
    for (const group of groupsOf(tests)) {
      const [first] = group.tests;
      if (first === undefined) continue;
      if (listedEntryOf(first) !== undefined) {
        lines.push(`  ${group.title} (${first.type}, ${plural(group.tests.length, 'case')})`);
        for (const test of group.tests) lines.push(`    ${test.name}`);
      } else if (!listed && isUnlistedEntry(first)) {
        lines.push(`  ${first.name} (${first.type}, not listed: --no-list)`);
      } else {
        lines.push(`  ${first.name} (${first.type})`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

export function registerCheckCommand(program: Command): void {
  program
    .command('check')
    .description('load a runset.config.yaml as `serve` would, list its Playwright and framework entries, and print the tests each environment runs; exit 2 with the error `serve` would give')
    .addOption(new Option('-c, --config <file>', 'suite config file').env('RUNSET_CONFIG').default(DEFAULTS.configPath))
    .option('--no-list', 'do not list Playwright and framework entries (no process is spawned): check the file alone')
    .addHelpText('after', '\nListing runs each entry\'s own framework (`playwright test --list`, …), as `serve` does at start; --no-list is for a fast pre-commit hook.')
    .action(async (flags: CheckFlags) => {
      // The loader and listing load only when check runs (main.ts loads every command's module for --help).
      const [{ loadSuite }, { ConfigError, testsForEnvironment }] = await Promise.all([import('../config/load.js'), import('../config/suite.js')]);
      let config: SuiteConfig;
      try {
        config = await loadSuite(resolvePath(flags.config), { discover: flags.list });
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        // Word for word what `serve` prints for the same file (src/cli/serve.ts runUntilSignalled), and its exit code.
        process.stderr.write(`runset: ${err.message}\n`);
        process.exit(2);
      }
      const loaded = config;
      process.stdout.write(describeSuite(loaded, flags.list, (env) => testsForEnvironment(loaded, env)));
      process.stderr.write(`runset: ${loaded.file} is valid${flags.list ? '' : ' (entries not listed: --no-list)'}\n`);
    });
}
