/**
 * A browser-free Playwright suite (ES module package, TypeScript config) with a
 * `webServer` (a small Node server script) and a `globalSetup`, which breaks in
 * the way its BREAK variable names — so one suite, one runset config, gives
 * every way Playwright can fail outside a test:
 *
 * - `config`: the config throws while loading (at run time only, so listing works);
 * - `setup`:  globalSetup throws;
 * - `server`: the webServer exits before it ever answers;
 * - `crash`:  the runner process dies of an uncaught exception while a test runs;
 * - `kill`:   the runner process is killed outright (SIGKILL) while a test runs;
 * - unset:    nothing breaks (the webServer answers; each start is logged to SERVER_LOG).
 *
 * Every message carries the secret API_TOKEN, which must reach no member in clear.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

export const BREAK_SECRET = 'brk-s3cr3t-in-an-error-message';

const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'breakable', private: true, type: 'module' }),
  'playwright.config.ts': `
import { defineConfig } from '@playwright/test';
if (process.env.BREAK === 'config') throw new Error('the config refuses to load with token ' + process.env.API_TOKEN);
export default defineConfig({
  testDir: 'tests',
  workers: 1,
  globalSetup: './global-setup.ts',
  webServer: {
    command: 'node server.mjs',
    url: 'http://127.0.0.1:' + (process.env.SERVER_PORT ?? '9') + '/',
    reuseExistingServer: false,
    timeout: 20_000,
  },
});
`,
  'global-setup.ts': `
import { existsSync } from 'node:fs';
export default async function globalSetup() {
  if (process.env.BREAK === 'setup') throw new Error('global setup cannot reach the database with token ' + process.env.API_TOKEN);
  if (process.env.BREAK === 'crash' || process.env.BREAK === 'kill') {
    // The runner process itself (globalSetup runs there) throws or is killed outright, once the
    // first test says it runs: a fixed delay would race a slow start on a busy machine. It acts
    // one tick after it sees the test's file, so the runner has read the test's begin (sent
    // before the file was written) first; a test killing its runner itself raced that read.
    let seen = false;
    const timer = setInterval(() => {
      if (!seen) {
        seen = existsSync(process.env.SERVER_LOG + '.test-started');
        return;
      }
      clearInterval(timer);
      if (process.env.BREAK === 'kill') process.kill(process.pid, 'SIGKILL');
      throw new Error('the runner crashed with token ' + process.env.API_TOKEN);
    }, 50);
    timer.unref();
  }
}
`,
  'server.mjs': `
import http from 'node:http';
import { appendFileSync } from 'node:fs';
if (process.env.BREAK === 'server') {
  console.error('web server cannot open its database with token ' + process.env.API_TOKEN);
  process.exit(3);
}
appendFileSync(process.env.SERVER_LOG, process.pid + '\\n');
http.createServer((req, res) => res.end('hello from the web server')).listen(Number(process.env.SERVER_PORT), '127.0.0.1');
`,
  'tests/served.spec.ts': `
import { writeFileSync } from 'node:fs';
import { test, expect } from '@playwright/test';
test('the web server answers', async () => {
  if (process.env.BREAK === 'crash' || process.env.BREAK === 'kill') {
    // The runner crashes or is killed outright (it cannot stop its webServer itself) while this runs.
    writeFileSync(process.env.SERVER_LOG + '.test-started', '');
    await new Promise((resolve) => setTimeout(resolve, 5000));
  }
  const res = await fetch('http://127.0.0.1:' + process.env.SERVER_PORT + '/');
  expect(await res.text()).toBe('hello from the web server');
});
test('it answers again', async () => {
  const res = await fetch('http://127.0.0.1:' + process.env.SERVER_PORT + '/');
  expect(res.status).toBe(200);
});
test.describe('more', () => {
  test('and a third time', async () => {
    const res = await fetch('http://127.0.0.1:' + process.env.SERVER_PORT + '/');
    expect(res.ok).toBe(true);
  });
});
`,
};

export const BREAKAGES = ['config', 'setup', 'server', 'crash', 'kill'] as const;

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One breakable suite as written: its runset config text alone, and what a shared config needs of it. */
export interface BreakableSuite {
  /** A whole runset config holding this suite alone (entry `breakable`, environments named as BREAKAGES and `ok`). */
  config: string;
  /** Its environments' lines and its entry's line (named `breakable-<tag>`), for a config holding several suites. */
  environments: string[];
  entry: string;
  /** The environment of a breakage (or `ok`) in the shared config. */
  env(name: string): string;
  /** The file its webServer logs each start to, one per environment (the sets run at once). */
  serverLog(name: string): string;
}

/**
 * Writes the suite into `dir/<tag>` — its node_modules a link to `modules`, so
 * that @playwright/test version is the suite's own — with one environment per
 * breakage and `ok`, each with its own port and server log, so the sets of
 * several suites can run at the same time on one server.
 */
export async function writeBreakableSuite(dir: string, tag: string, modules: string): Promise<BreakableSuite> {
  const suite = path.join(dir, tag);
  for (const [name, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(suite, name)), { recursive: true });
    writeFileSync(path.join(suite, name), text);
  }
  symlinkSync(modules, path.join(suite, 'node_modules'), 'dir');
  const serverLog = (name: string) => path.join(dir, `${tag}-${name}-server-starts.log`);
  const env = (name: string) => `${tag}-${name}`;
  const own: string[] = [];
  const shared: string[] = [];
  for (const name of [...BREAKAGES, 'ok']) {
    writeFileSync(serverLog(name), '');
    const vars = [`API_TOKEN: "\${env:BREAK_TOKEN}"`, `SERVER_PORT: "${await freePort()}"`, `SERVER_LOG: ${JSON.stringify(serverLog(name))}`];
    if (name !== 'ok') vars.push(`BREAK: ${name}`);
    own.push(`  ${name}: { variables: { ${vars.join(', ')} } }`);
    shared.push(`  ${env(name)}: { variables: { ${vars.join(', ')} } }`);
  }
  const envNames = [...BREAKAGES, 'ok'].map((name) => `"${env(name)}"`).join(', ');
  return {
    config: `environments:\n${own.join('\n')}\ntests:\n  - { name: breakable, type: playwright, dir: "${tag}" }\n`,
    environments: shared,
    entry: `  - { name: breakable-${tag}, type: playwright, dir: "${tag}", environments: [${envNames}] }`,
    env,
    serverLog,
  };
}
