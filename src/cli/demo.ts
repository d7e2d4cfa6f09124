/**
 * `runset demo` (what `npm start` runs): the demo shop on 127.0.0.1:4010, runset
 * serving examples/demo/runset.config.yaml against it, and a fresh key with
 * copy-paste curl lines. Nothing needs the internet.
 */
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { DEFAULTS, defaultWorkers } from '../config/options.js';
import { compileServeOptions, runUntilSignalled } from './serve.js';
import { browserProblem, noChromium } from '../executors/playwright/chromium.js';

const DEMO_DIR = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));
const DEMO_CONFIG_FILE = 'runset.config.yaml';

/**
 * The demo's config, from where it can run. Installed as a package, the demo
 * lies under node_modules, where Playwright does not compile TypeScript (its
 * listing of the demo suite fails on playwright.config.ts): there it runs from
 * a fresh copy in the data dir. From a clone it runs in place, so an edit to
 * examples/demo shows at the next start. The copy's folder has a name runset
 * alone uses and a mark inside; a folder of that name without the mark is the
 * user's, and is never removed.
 */
export function demoConfig(dataDir: string, demoDir: string = DEMO_DIR): string {
  if (!path.resolve(demoDir).split(path.sep).includes('node_modules')) return path.join(demoDir, DEMO_CONFIG_FILE);
  const copy = path.resolve(dataDir, DEMO_COPY_DIR);
  if (existsSync(copy) && !existsSync(path.join(copy, DEMO_COPY_MARK))) {
    throw new Error(`${copy} exists and was not made by runset demo, which copies its demo there: move it away, or pass another --data-dir`);
  }
  rmSync(copy, { recursive: true, force: true });
  cpSync(demoDir, copy, { recursive: true, filter: (src) => path.basename(src) !== 'node_modules' });
  writeFileSync(path.join(copy, DEMO_COPY_MARK), 'made by runset demo: replaced at its next start\n');
  return path.join(copy, DEMO_CONFIG_FILE);
}
const DEMO_COPY_DIR = '.runset-demo';
const DEMO_COPY_MARK = '.made-by-runset-demo';
const SHOP_PORT = 4010;

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('start runset with the demo suite and the demo shop it tests (what `npm start` runs)')
    .addOption(new Option('--port <n>', 'API port').env('RUNSET_PORT').default(String(DEFAULTS.port)))
    .addOption(new Option('--data-dir <dir>', 'data dir').env('RUNSET_DATA_DIR').default(DEFAULTS.dataDir))
    // The container image sets RUNSET_HOST=0.0.0.0 so that `docker run -p 8080:8080` reaches the demo.
    .addOption(new Option('--host <host>', 'address the API listens on').env('RUNSET_HOST').default(DEFAULTS.host))
    .action(async (flags: { port: string; dataDir: string; host: string }) => {
      const [{ DEMO_PASSWORD_ENV, startDemoShop }, { createKey }] = await Promise.all([import('../demo/shop.js'), import('../auth/keys.js')]);
      process.env[DEMO_PASSWORD_ENV] ??= 'demo-password';
      const config = demoConfig(flags.dataDir);
      const shop = await startDemoShop(SHOP_PORT);
      const options = compileServeOptions(
        {
          config,
          port: flags.port,
          host: flags.host,
          dataDir: flags.dataDir,
          workers: String(defaultWorkers()),
          lease: '30s',
          grace: '5s',
          setsPerMinute: String(DEFAULTS.setsPerMinute),
          logLevel: process.env.RUNSET_LOG_LEVEL ?? 'warn',
          databaseSchema: DEFAULTS.databaseSchema,
          chromium: process.env.RUNSET_CHROMIUM,
          artifactRetention: process.env.RUNSET_ARTIFACT_RETENTION,
        },
        { api: true },
      );
      // The browser part of the demo needs Chromium (the operator's, Playwright's own or the
      // system's); without any the rest still runs.
      const noBrowser = options.chromium ? browserProblem(options.chromium) : await noChromium();
      if (noBrowser) process.stderr.write(`runset demo: leaving out the Playwright tests: ${noBrowser}\n`);
      await runUntilSignalled(noBrowser ? { ...options, skipTestTypes: ['playwright'] } : options, async (rt) => {
        for (const key of await rt.store.keys.list()) {
          if (key.name === 'demo' && !key.revokedAt) await rt.store.keys.revoke(key.id);
        }
        const { token } = await createKey(rt.store, 'demo');
        process.stdout.write(demoBanner(rt.apiUrl ?? '', token, config));
        process.on('exit', () => shop.close());
      });
    });
}

function demoBanner(api: string, token: string, config: string): string {
  return `
runset demo is up.
  API:        ${api}   (OpenAPI: ${api}/openapi.json)
  dashboard:  ${api.replace(/\/api$/, '/')}   (sign in with the key below)
  demo shop:  http://127.0.0.1:${SHOP_PORT}
  suite:      ${path.relative(process.cwd(), config) || config} (environments: demo passes, broken fails)

A key for this demo (a new one each start; the previous demo key is revoked):
  export RUNSET_URL=${api}
  export RUNSET_API_KEY=${token}

Create a set, then poll it until SUCCESS or FAIL:
  ID=$(curl -s -X POST "$RUNSET_URL/v0/test-run-sets" -H "Authorization: Bearer $RUNSET_API_KEY" \\
        -H 'Content-Type: application/json' -d '{"env":"demo"}' | sed 's/.*"testRunSetId":"\\([^"]*\\)".*/\\1/')
  curl -s "$RUNSET_URL/v0/test-run-sets/$ID" -H "Authorization: Bearer $RUNSET_API_KEY"
  curl -s "$RUNSET_URL/v0/test-run-sets/$ID/test-runs" -H "Authorization: Bearer $RUNSET_API_KEY"

Or with the CI client:  npx runset trigger --env broken --wait
Stop with Ctrl-C.
`;
}
