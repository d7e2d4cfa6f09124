/**
 * Suites that travel with the set, end to end on real processes: `runset
 * trigger --suite DIR` packs a folder, uploads it and runs exactly that
 * version. On SQLite with the server's own (direct) workers and on PostgreSQL
 * with two `runset worker --url` (HTTP) workers and a direct `runset worker`: two versions of one suite run at
 * the same time on the same workers, each with its own files (a command and a
 * Playwright case print a marker from their own folder); a test added in a
 * version is a member of its set; an environment that does not opt in refuses;
 * bad uploads are refused with nothing stored; a version whose `npm ci` fails
 * ends FAIL with npm's words.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { create as tarCreate } from 'tar';
import { api, assertNoLeakedServers, CLI, runsetCli as cli, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { dropSchemas, newSchemaName, NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { chromiumMissing } from './playwright-fixtures.js';

const noBrowser = chromiumMissing();

interface Member { name: string; type: string; status: string; error: string | null; output: string | null }

/**
 * A suite folder at one version: a command and (with a browser, unless `browser` is false) a Playwright case,
 * each printing `marker` from its own files. Only the versions run side by side need the Playwright case
 * (each its own files in a browser too); a Playwright run costs a Chromium start.
 */
function suiteFolder(marker: string, extra = false, browser = !noBrowser): string {
  const dir = tempDir(`runset-suite-${marker}-`);
  mkdirSync(path.join(dir, 'tests'));
  writeFileSync(path.join(dir, 'marker.txt'), marker);
  writeFileSync(path.join(dir, 'print.js'), "console.log('marker ' + require('fs').readFileSync(require('path').join(__dirname, 'marker.txt'), 'utf8'))\n");
  writeFileSync(path.join(dir, 'playwright.config.ts'), "import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: 'tests', timeout: 15_000 });\n");
  writeFileSync(path.join(dir, 'tests', 'marker.spec.ts'), `
import { test, expect } from '@playwright/test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
test('page shows the marker', async ({ page }) => {
  const marker = readFileSync(path.join(__dirname, '..', 'marker.txt'), 'utf8');
  console.log('pw marker ' + marker);
  await page.setContent('<h1>' + marker + '</h1>');
  await expect(page.locator('h1')).toHaveText(marker);
});
`);
  writeFileSync(path.join(dir, '.gitignore'), 'ignored-by-git.txt\n');
  writeFileSync(path.join(dir, 'ignored-by-git.txt'), 'never uploaded');
  writeFileSync(path.join(dir, 'runset.config.yaml'), `
environments:            # ignored: environments come from the server
  somewhere: { variables: { X: "1" } }
tests:
  - { name: marker, type: command, run: [node, print.js] }
${extra ? "  - { name: added, type: command, run: [node, -e, \"console.log('added in " + marker + "')\"] }" : ''}
${browser ? '  - { name: pw, type: playwright, dir: ., workers: 1 }' : ''}
`);
  return dir;
}

async function members(server: RunningServer, setId: string): Promise<Member[]> {
  return (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`)).body.testRuns;
}

/** A gzipped tar of `dir` as anyone could make it (not runset's packer), its id, and its bytes. */
async function rawArchive(dir: string, entries: string[]): Promise<{ id: string; bytes: Buffer }> {
  const file = path.join(tempDir('runset-raw-'), 'a.tar.gz');
  await tarCreate({ gzip: true, file, cwd: dir, portable: true }, entries);
  const bytes = readFileSync(file);
  return { id: createHash('sha256').update(bytes).digest('hex'), bytes };
}

async function upload(server: RunningServer, id: string, bytes: Buffer): Promise<{ status: number; body: { code?: string; detail?: string } }> {
  const res = await fetch(`${server.url}/v0/suites/${id}`, { method: 'PUT', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/gzip' }, body: bytes });
  return { status: res.status, body: (await res.json()) as { code?: string; detail?: string } };
}

const SERVER_CONFIG = `
environments:
  preview: { allowSuiteUploads: true }
  staging: {}
tests:
  - { name: server own, type: command, run: [node, -e, "console.log('server own')"] }
`;

const httpWorkers = new Set<ChildProcess>();
after(() => {
  for (const proc of httpWorkers) proc.kill('SIGKILL');
  assertNoLeakedServers();
});

for (const shape of ['sqlite with direct workers', 'postgres with HTTP and direct workers'] as const) {
  const pg = shape.startsWith('postgres');
  describe(`suites that travel with the set: ${shape}`, { skip: pg && !TEST_DATABASE_URL ? NO_DATABASE : undefined }, () => {
    const schema = newSchemaName('runset_suites');
    let server: RunningServer;

    before(async () => {
      const cache = tempDir('runset-suite-cache-');
      const store = pg ? ['--database-url', TEST_DATABASE_URL!, '--database-schema', schema] : [];
      const workers = pg ? ['--no-workers'] : ['--workers', '3', '--suite-cache', cache];
      server = await startRunset({ config: SERVER_CONFIG, args: [...workers, '--poll', '300ms', '--max-suite-size', '2MB', ...store] });
      if (pg) {
        const key = await api<{ token: string }>(server, 'POST', '/v0/keys', { body: { name: 'suite workers', role: 'worker' } });
        const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_')));
        // Two HTTP workers and a direct one: a version reaches a worker through either link.
        const fleet = [
          { args: ['--url', server.url], env: { RUNSET_API_KEY: key.body.token } },
          { args: ['--url', server.url], env: { RUNSET_API_KEY: key.body.token } },
          { args: ['--config', server.configPath, '--data-dir', tempDir('runset-direct-worker-'), ...store], env: {} },
        ];
        for (const worker of fleet) {
          const proc = spawn(process.execPath, [CLI, 'worker', ...worker.args, '--workers', '2', '--suite-cache', tempDir('runset-suite-cache-'), '--log-level', 'warn'], {
            env: { ...env, ...worker.env },
            stdio: 'ignore',
          });
          httpWorkers.add(proc);
          proc.on('exit', () => httpWorkers.delete(proc));
        }
      }
    });
    after(async () => {
      for (const proc of httpWorkers) proc.kill('SIGTERM');
      await server?.stop();
      if (pg) await dropSchemas(TEST_DATABASE_URL!, [schema]);
    });

    test('two versions of one suite run at the same time, each its own files; a test added in one is its member', { timeout: 120_000 }, async () => {
      const junit = path.join(tempDir('runset-junit-'), 'junit.xml');
      const [one, two] = await Promise.all([
        cli(server, ['trigger', '--env', 'preview', '--suite', suiteFolder('one'), '--wait', '--json', '--timeout', '100s', '--junit', junit]),
        cli(server, ['trigger', '--env', 'preview', '--suite', suiteFolder('two', true), '--wait', '--json', '--timeout', '100s']),
      ]);
      for (const [name, res] of [['one', one], ['two', two]] as const) {
        assert.equal(res.code, 0, `${name}: ${res.stderr}`);
        assert.match(res.stderr, /environments.*ignored/i, 'the CLI says the uploaded file\'s environments are ignored');
        const set = JSON.parse(res.stdout) as { id: string; status: string };
        assert.equal(set.status, 'SUCCESS');
        const runs = await members(server, set.id);
        const marker = runs.find((m) => m.name === 'marker');
        assert.match(marker?.output ?? '', new RegExp(`marker ${name}`), JSON.stringify(runs));
        if (!noBrowser) assert.match(runs.find((m) => m.type === 'playwright' || m.name.includes('page shows the marker'))?.output ?? '', new RegExp(`pw marker ${name}`), JSON.stringify(runs));
        assert.equal(runs.some((m) => m.name === 'added'), name === 'two');
        assert.ok(!runs.some((m) => m.name === 'server own'), 'a version brings its own tests, not the server\'s');
        const details = await api<{ suite: { id: string } | null }>(server, 'GET', `/v0/test-run-sets/${set.id}/details`);
        assert.match(details.body.suite?.id ?? '', /^[0-9a-f]{64}$/);
        if (name === 'one') assert.match(readFileSync(junit, 'utf8'), new RegExp(`<property name="runset\\.suite\\.id" value="${details.body.suite?.id}"/>`), 'the JUnit report names the version');
      }
    });

    test('the same content uploads nothing; a name points at a version; an environment that does not opt in refuses', { timeout: 60_000 }, async () => {
      const dir = suiteFolder('same', false, false); // naming and refusals: the command alone runs the version
      const first = await cli(server, ['suites', 'push', dir, '--name', 'main']);
      assert.equal(first.code, 0, first.stderr);
      const again = await cli(server, ['suites', 'push', dir]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout + again.stderr, /already/i);
      const id = /[0-9a-f]{64}/.exec(first.stdout)?.[0];
      assert.ok(id, first.stdout);
      assert.equal(/[0-9a-f]{64}/.exec(again.stdout)?.[0], id, 'the same content is the same version');
      const listed = await api<{ versions: Array<{ id: string; names: string[] }> }>(server, 'GET', '/v0/suites');
      assert.deepEqual(listed.body.versions.find((v) => v.id === id)?.names, ['main']);

      const byName = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'preview', suite: 'main' } });
      assert.equal(byName.status, 200, byName.text);
      const refused = await api<{ code: string; detail: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', suite: 'main' } });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'suite_uploads_not_allowed');
      assert.match(refused.body.detail, /allowSuiteUploads/);
      const unknown = await api<{ code: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'preview', suite: 'no-such-name' } });
      assert.equal(unknown.status, 422);
      assert.equal(unknown.body.code, 'unknown_suite');
      assert.equal((await waitForSet(server, byName.body.testRunSetId as string, 60_000)).status, 'SUCCESS');
    });

    test('bad uploads are refused with a clear 4xx and nothing stored', { timeout: 60_000 }, async () => {
      const dir = tempDir('runset-bad-suite-');
      writeFileSync(path.join(dir, 'runset.config.yaml'), 'tests:\n  - { name: a, type: command, run: ["true"] }\n');
      writeFileSync(path.join(dir, 'big.bin'), randomBytes(3 * 1024 * 1024)); // incompressible: the limit is on the archive
      symlinkSync('/etc/passwd', path.join(dir, 'link'));
      const before = (await api<{ versions: unknown[] }>(server, 'GET', '/v0/suites')).body.versions.length;

      const good = await rawArchive(dir, ['runset.config.yaml']);
      const mismatch = await upload(server, 'f'.repeat(64), good.bytes);
      assert.equal(mismatch.status, 400);
      assert.equal(mismatch.body.code, 'suite_hash_mismatch');

      const link = await rawArchive(dir, ['runset.config.yaml', 'link']);
      const linked = await upload(server, link.id, link.bytes);
      assert.equal(linked.status, 422);
      assert.match(linked.body.detail ?? '', /link/);

      const big = await rawArchive(dir, ['runset.config.yaml', 'big.bin']);
      assert.equal((await upload(server, big.id, big.bytes)).status, 413);

      const garbage = Buffer.from('not a tar at all');
      const notTar = await upload(server, createHash('sha256').update(garbage).digest('hex'), garbage);
      assert.equal(notTar.status, 422);
      assert.equal(notTar.body.code, 'suite_refused');

      const nested = tempDir('runset-escape-');
      mkdirSync(path.join(nested, 'inner'));
      writeFileSync(path.join(nested, 'inner', 'runset.config.yaml'), 'tests: []\n');
      writeFileSync(path.join(nested, 'outside.txt'), 'x');
      const escape = await rawArchive(path.join(nested, 'inner'), ['runset.config.yaml', '../outside.txt']);
      assert.equal((await upload(server, escape.id, escape.bytes)).status, 422);

      const bare = tempDir('runset-no-config-');
      writeFileSync(path.join(bare, 'other.txt'), 'x');
      const noConfig = await rawArchive(bare, ['other.txt']);
      const missing = await upload(server, noConfig.id, noConfig.bytes);
      assert.equal(missing.status, 422);
      assert.match(missing.body.detail ?? '', /runset\.config\.yaml/);
      assert.equal((await api<{ versions: unknown[] }>(server, 'GET', '/v0/suites')).body.versions.length, before, 'nothing was stored');
    });

    test('a version whose npm ci fails ends FAIL with npm\'s own words', { timeout: 120_000 }, async () => {
      const dir = tempDir('runset-npm-fails-');
      writeFileSync(path.join(dir, 'runset.config.yaml'), 'tests:\n  - { name: needs deps, type: command, run: [node, -e, "1"] }\n');
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'broken-suite', version: '1.0.0', dependencies: { 'left-pad': '1.3.0' } }));
      // A lockfile that does not match package.json: npm ci refuses it.
      writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify({ name: 'broken-suite', version: '1.0.0', lockfileVersion: 3, requires: true, packages: { '': { name: 'broken-suite', version: '1.0.0' } } }));
      const res = await cli(server, ['trigger', '--env', 'preview', '--suite', dir, '--wait', '--json', '--timeout', '100s']);
      assert.equal(res.code, 1, res.stderr);
      const set = JSON.parse(res.stdout) as { id: string; status: string };
      assert.equal(set.status, 'FAIL');
      const [member] = await members(server, set.id);
      assert.match(member?.error ?? '', /npm ci/);
      assert.match(member?.error ?? '', /in sync|lock file|package-lock/i);
    });
  });
}
