/**
 * `runset init [DIR]`: writes a commented runset.config.yaml for the test
 * suites found under DIR (src/config/init/), one environment declaring the
 * variables they read. It never overwrites a file without --force, and never
 * writes one runset's loader refuses. Exit 2 when it writes nothing.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';

interface InitFlags {
  config?: string;
  env: string;
  force?: boolean;
}

const LOOKED_FOR = 'playwright.config.*, vitest.config.*, jest.config.* or package.json "jest", .mocharc.*, cucumber.*, pytest.ini, pyproject.toml [tool.pytest.ini_options] or conftest.py, *.postman_collection.json';

function refuse(message: string): never {
  process.stderr.write(`runset: ${message}\n`);
  process.exit(2);
}

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('write a commented runset.config.yaml for the test suites found in a repository (Playwright, Vitest, Jest, Mocha, Cucumber, pytest, Newman), declaring the variables they read')
    .argument('[dir]', 'the repository folder to search', '.')
    .addOption(new Option('-c, --config <file>', 'the file to write (default: DIR/runset.config.yaml); its paths are relative to its folder'))
    .option('--env <name>', 'the name of the environment it declares', 'local')
    .option('--force', 'overwrite the file if it exists')
    .addHelpText('after', `\nSuites are found by their files (${LOOKED_FOR}), outside node_modules and dot-folders; nothing of the repository is run.`)
    .action(async (dir: string, flags: InitFlags) => {
      const root = path.resolve(dir);
      const file = path.resolve(flags.config ?? path.join(root, 'runset.config.yaml'));
      // The loader's modules load only when init runs (main.ts loads every command's module for --help).
      const [{ planConfig }, { ConfigError }, { ENVIRONMENT_NAME }] = await Promise.all([import('../config/init/write.js'), import('../config/suite.js'), import('../config/suite-schema.js')]);
      if (!ENVIRONMENT_NAME.test(flags.env)) refuse(`--env "${flags.env}" is not an environment name; use letters, digits, "_", "." and "-", starting with a letter or digit`);
      if (!flags.force && existsSync(file)) refuse(`${file} already exists; runset init does not overwrite it without --force (or write elsewhere with --config FILE)`);
      let plan: Awaited<ReturnType<typeof planConfig>>;
      try {
        plan = planConfig(root, file, flags.env);
      } catch (err) {
        // A config runset would refuse is never written; the error says what init got wrong.
        if (err instanceof ConfigError) refuse(`the config made from ${root} does not load, so nothing was written: ${err.message}`);
        throw err;
      }
      if (plan.suites.length === 0) refuse(`found no test suite under ${root} (looked for ${LOOKED_FOR}); nothing was written`);
      try {
        // 'wx': a file made since the check above is not overwritten either.
        writeFileSync(file, plan.text, { flag: flags.force ? 'w' : 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') refuse(`${file} already exists; runset init does not overwrite it without --force`);
        throw err;
      }
      const variables = plan.variables.declared.map((v) => v.name);
      const relative = path.relative(process.cwd(), file) || file;
      process.stderr.write(
        `runset: wrote ${file}: ${plan.names.length} entr${plan.names.length === 1 ? 'y' : 'ies'} (${plan.names.join(', ')}), ` +
          `environment ${flags.env} with ${variables.length > 0 ? `variables ${variables.join(', ')}` : 'no variable'}\n` +
          `Next:${variables.length > 0 ? " set the variables' values in it, then" : ''}\n  runset check -c ${relative}      # loads it as serve will, lists the tests\n  runset serve --config ${relative}\n  runset trigger --env ${flags.env}    # from CI, with RUNSET_URL and RUNSET_API_KEY\n`,
      );
    });
}
