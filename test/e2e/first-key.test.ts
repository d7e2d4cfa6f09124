/**
 * `runset serve` on a store that has never had a key makes a first admin key
 * and prints it once, ready to paste; never again on that store — not on a
 * restart, not once its keys are all revoked — and never beside
 * RUNSET_BOOTSTRAP_KEY. On PostgreSQL, of several `serve` starting at once on
 * one schema, exactly one makes it.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ApiKeyRecord } from '../../src/core/keys.js';
import { api, assertNoLeakedServers, CLI, startRunset, type RunningServer, type StartOptions } from '../helpers/server.js';
import { dropSchemas, newSchemaName, NO_DATABASE, query, TEST_DATABASE_URL } from '../helpers/postgres.js';

after(() => assertNoLeakedServers());

const CONFIG = 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n';
const PRINTED_KEY = /export RUNSET_API_KEY=(rs_\S+)/g;

/** `serve` without RUNSET_BOOTSTRAP_KEY (empty is unset), unless `bootstrap` is true. */
function serve(opts: StartOptions, bootstrap = false): Promise<RunningServer> {
  return startRunset({ config: CONFIG, ...opts, env: { ...(bootstrap ? {} : { RUNSET_BOOTSTRAP_KEY: '' }), ...opts.env } });
}

/** The keys it printed, once it has stopped (so that all it wrote has been read). */
async function printedKeys(server: RunningServer): Promise<string[]> {
  assert.equal(await server.stop(), 0, server.logs());
  await new Promise((resolve) => setTimeout(resolve, 100));
  return [...server.logs().matchAll(PRINTED_KEY)].map((m) => m[1]!);
}

/** `runset <args>` on the CLI, its stdout (it throws, with its stderr, when it fails); not sync, so cases running at once are not held. */
async function cli(args: string[]): Promise<string> {
  return (await promisify(execFile)(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 15_000 })).stdout;
}

async function keysOf(dataDir: string): Promise<ApiKeyRecord[]> {
  return JSON.parse(await cli(['keys', 'list', '--json', '--data-dir', dataDir])) as ApiKeyRecord[];
}

describe('first keys (each case on its own store, all at once)', { concurrency: true }, () => {
  test('SQLite: the first start prints an admin key that works; restarts and a store with revoked keys get none', async () => {
    const first = await serve({});
    const [token, ...more] = await printedKeys(first);
    assert.ok(token, `a key is printed:\n${first.logs()}`);
    assert.deepEqual(more, [], 'once');
    assert.equal(first.logs().split(token).length, 2, 'the token appears once in all the output');
    assert.ok(!first.stderr().includes(token), 'on stdout, as the demo prints its key');
    assert.match(first.logs(), new RegExp(`export RUNSET_URL=${first.url.replace(/[.]/g, '\\.')}\n`));

    const again = await serve({ configPath: first.configPath, dataDir: first.dataDir });
    const keys = await api<{ keys: ApiKeyRecord[] }>({ url: again.url, apiKey: token }, 'GET', '/v0/keys');
    assert.equal(keys.status, 200, 'the printed key is an admin key');
    assert.deepEqual(keys.body.keys.map((k) => [k.name, k.role, k.envs]), [['first admin', 'admin', null]]);
    assert.deepEqual(await printedKeys(again), [], 'a restart makes no key');

    await cli(['keys', 'revoke', keys.body.keys[0]!.id, '--data-dir', first.dataDir]);
    const locked = await serve({ configPath: first.configPath, dataDir: first.dataDir });
    assert.deepEqual(await printedKeys(locked), [], 'a store whose keys were all revoked stays locked');
    assert.equal((await keysOf(first.dataDir)).length, 1);
  });

  test('SQLite: beside RUNSET_BOOTSTRAP_KEY no key is printed', async () => {
    const bootstrapped = await serve({}, true);
    assert.deepEqual(await printedKeys(bootstrapped), [], 'RUNSET_BOOTSTRAP_KEY is the first key');
    assert.deepEqual((await keysOf(bootstrapped.dataDir)).map((k) => k.name), ['bootstrap']);
  });

  describe('PostgreSQL', { skip: TEST_DATABASE_URL ? false : NO_DATABASE }, () => {
    test('three serve starting at once on a fresh schema: one prints a key, the schema holds that one key', async (t) => {
      const url = TEST_DATABASE_URL!;
      const schema = newSchemaName('runset_first');
      t.after(() => dropSchemas(url, [schema]));
      const args = ['--database-url', url, '--database-schema', schema, '--workers', '1'];
      const servers = await Promise.all([0, 1, 2].map(() => serve({ args })));
      const printed = (await Promise.all(servers.map(printedKeys))).flat();
      assert.equal(printed.length, 1, servers.map((s) => s.logs()).join('\n---\n'));
      const rows = await query<{ name: string; role: string }>(url, `SELECT name, role FROM "${schema}".api_keys`);
      assert.deepEqual(rows, [{ name: 'first admin', role: 'admin' }]);
      const later = await serve({ args });
      const keys = await api<{ keys: ApiKeyRecord[] }>({ url: later.url, apiKey: printed[0]! }, 'GET', '/v0/keys');
      assert.equal(keys.status, 200, 'the printed key works on any process of the store');
      assert.deepEqual(await printedKeys(later), []);
    });
  });
});
