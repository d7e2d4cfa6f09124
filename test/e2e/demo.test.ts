/**
 * `npm start` is `runset demo`: the demo shop, runset serving the demo suite
 * against it, and a banner with a key and copy-paste curl lines. This runs the
 * banner's own lines in a shell, as a reader would paste them, and follows both
 * environments to their end: `demo` passes, `broken` fails. Then the same demo
 * from the package: `npm pack`, installed into an empty folder, its own `runset
 * demo` and `runset trigger --wait`. (One file: the demo shop's port is fixed.)
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { CLI, REPO_ROOT, tempDir } from '../helpers/server.js';
import { chromiumMissing } from './playwright-fixtures.js';

interface Status {
  status: string;
  progress: { counts: { WAITING: number; RUNNING: number; SUCCESS: number; FAIL: number } };
}

const exec = promisify(execFile);

/** `script` run by sh with `env`: its standard output. */
async function sh(script: string, env: NodeJS.ProcessEnv): Promise<string> {
  return (await exec('sh', ['-c', script], { env, encoding: 'utf8' })).stdout;
}

interface Packed {
  files: Set<string>;
  app: string;
}

/**
 * The tree npm test just built, packed (npm pack would run `prepare`, the same build, again) and installed into
 * an empty folder. Started when the file loads, so npm packs and installs while the first test's demo runs.
 */
async function packAndInstall(): Promise<Packed> {
  const dir = tempDir('runset-package-');
  const [packed] = JSON.parse((await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: REPO_ROOT, encoding: 'utf8' })).stdout) as [
    { filename: string; files: { path: string }[] },
  ];
  const app = path.join(dir, 'app');
  mkdirSync(app, { recursive: true });
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'a-team-project', private: true }));
  // No install scripts: better-sqlite3's would compile it (a minute, and node-gyp wants Node's headers
  // from the internet); the repository's own build of the same version is the same file.
  await exec('npm', ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', path.join(dir, packed.filename)], { cwd: app, timeout: 240_000 });
  return { files: new Set(packed.files.map((f) => f.path)), app };
}
const packaged = packAndInstall();
packaged.catch(() => undefined); // awaited (and so reported) by the package's test

/** `runset demo` (the CLI at `bin`, run in `cwd`) up: its whole output so far and the URL and key its banner gives. */
async function startDemo(t: TestContext, bin: string, cwd: string, dataDir: string): Promise<{ output: () => string; url: string; key: string }> {
  const proc = spawn(process.execPath, [bin, 'demo', '--port', '0', '--data-dir', dataDir], {
    cwd,
    env: { ...process.env, RUNSET_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(async () => {
    if (proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await exited; // the shop's port (4010) is free again before the next test
  });
  let output = '';
  proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 60_000;
  while (!output.includes('Stop with Ctrl-C')) {
    assert.ok(Date.now() < deadline && proc.exitCode === null, `the demo did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const url = /export RUNSET_URL=(\S+)/.exec(output)?.[1];
  const key = /export RUNSET_API_KEY=(rs_\S+)/.exec(output)?.[1];
  assert.ok(url && key, `the banner names the API and a key:\n${output}`);
  return { output: () => output, url, key };
}

test('npm start: the demo banner\'s curl lines create a set; demo ends SUCCESS, broken ends FAIL', { timeout: 240_000 }, async (t) => {
  const demoRun = await startDemo(t, CLI, REPO_ROOT, path.join(tempDir('runset-demo-'), 'data'));
  const { url, key } = demoRun;
  const output = demoRun.output();
  const lines = output.split('\n');
  const create = lines.slice(lines.findIndex((l) => l.includes('ID=$(curl')), lines.findIndex((l) => l.includes('ID=$(curl')) + 2).join('\n');
  const status = lines.find((l) => l.includes('curl -s "$RUNSET_URL/v0/test-run-sets/$ID"'))!;

  const env = { ...process.env, RUNSET_URL: url, RUNSET_API_KEY: key };
  const run = async (name: string): Promise<Status> => {
    // The banner's lines, pasted into a shell (for `broken`, with the env swapped).
    const script = `${create.replace('"env":"demo"', `"env":"${name}"`)}\necho "$ID"`;
    const id = (await sh(script, env)).trim();
    assert.match(id, /^[0-9a-f-]{36}$/, `the create line printed an id: ${id}`);
    // Waited for in-process (a shell and a curl each poll cost CPU), then read with the banner's own line.
    for (;;) {
      const res = await fetch(`${url}/v0/test-run-sets/${id}`, { headers: { authorization: `Bearer ${key}` } });
      const { status: now } = (await res.json()) as Status;
      if (now === 'SUCCESS' || now === 'FAIL') break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return JSON.parse(await sh(status, { ...env, ID: id })) as Status;
  };

  // Both sets at once: the demo's slots run them side by side, as a reader's two pastes would.
  const [demo, broken] = await Promise.all([run('demo'), run('broken')]);
  assert.equal(demo.status, 'SUCCESS', JSON.stringify(demo));
  assert.ok(demo.progress.counts.SUCCESS >= 4, 'http, command (and browser) tests all ran');
  assert.equal(broken.status, 'FAIL', JSON.stringify(broken));
  assert.ok(broken.progress.counts.FAIL > 0);
  assert.ok(!demoRun.output().includes('demo-password'), 'the shop password (a secret) is never printed');
});

test('the package: npm pack, installed into an empty folder, runs the demo (its Playwright suite included) and the CI client', { timeout: 300_000 }, async (t) => {
  const { files, app } = await packaged;
  for (const needed of ['dist/src/cli/main.js', 'dist/src/client/index.js', 'dist/src/client/index.d.ts', 'dist/dashboard/manifest.json', 'examples/demo/runset.config.yaml',
    'examples/demo/e2e/playwright.config.ts', 'README.md', 'LICENSE', 'CHANGELOG.md', 'docs/compatibility.md', 'schema/runset.config.schema.json']) {
    assert.ok(files.has(needed), `the package holds ${needed}`);
  }
  const leftOut = [...files].filter((f) => /^(src|test|bench|dist\/test|deploy|action|docs\/\.vitepress)\//.test(f) || f.endsWith('.map') || f.endsWith('.tsbuildinfo'));
  assert.deepEqual(leftOut, [], 'no sources, tests, benches, source maps or build state in the package');

  const native = (root: string) => path.join(root, 'node_modules', 'better-sqlite3');
  const version = (root: string) => (JSON.parse(readFileSync(path.join(native(root), 'package.json'), 'utf8')) as { version: string }).version;
  assert.equal(version(app), version(REPO_ROOT), 'the package installs the better-sqlite3 the repository built');
  cpSync(path.join(native(REPO_ROOT), 'build'), path.join(native(app), 'build'), { recursive: true });

  const bin = path.join(app, 'node_modules', 'runset', 'dist', 'src', 'cli', 'main.js');
  const { url, key, output } = await startDemo(t, bin, app, path.join(app, '.runset'));
  // Installed, the demo suite lies under node_modules, where Playwright compiles no TypeScript: it runs from a copy.
  assert.match(output(), /suite: {6}\.runset\/\.runset-demo\/runset\.config\.yaml/);
  const trigger = spawn(process.execPath, [bin, 'trigger', '--env', 'demo', '--wait', '--interval', '1s'], {
    cwd: app, env: { ...process.env, RUNSET_URL: url, RUNSET_API_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  trigger.stdout.on('data', (d: Buffer) => (said += d.toString()));
  trigger.stderr.on('data', (d: Buffer) => (said += d.toString()));
  const code = await new Promise((resolve) => trigger.once('exit', resolve));
  assert.equal(code, 0, said);
  // 4 HTTP and command tests, and the 2 cases of the Playwright suite where a Chromium is found.
  const expected = chromiumMissing() ? 4 : 6;
  assert.match(said, new RegExp(`SUCCESS: ${expected} of ${expected} tests passed`), `${said}\n---\n${output()}`);
});
