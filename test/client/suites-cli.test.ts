/**
 * `runset suites push|list` and `runset trigger --suite DIR|--suite-name NAME`
 * in-process, against a small fake of the suite routes (the real routes live
 * in src/api/routes/suites.ts): it keeps versions in memory and checks each
 * upload as the API does (src/suites/inspect.ts, then the tests-only parse and
 * the shipped listing), so a push that passes here is one the server takes.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTriggerCommand } from '../../src/cli/trigger.js';
import { runSuitesList, runSuitesPush } from '../../src/cli/suites.js';
import { inspectSuiteArchive } from '../../src/suites/inspect.js';
import { parseSuiteConfig } from '../../src/config/suite.js';
import { parseSuiteTests } from '../../src/config/suite-tests.js';
import { applySuiteListing } from '../../src/config/suite-listing.js';
import { SUITE_CONFIG_FILE, VERSION_ROOT } from '../../src/core/suites.js';
import type { TestSpec } from '../../src/core/types.js';
import { collector } from './fake-server.js';

const KEY = 'rs_test_0123456789abcdefSECRETKEY';
const DEMO = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));
const SERVER_ENVS = parseSuiteConfig(
  'environments:\n  demo: { variables: { BASE_URL: "http://x", SHOP_PASSWORD: "p" } }\n  preview: { variables: { BASE_URL: "http://y", SHOP_PASSWORD: "p" } }\ntests: []\n',
  '/srv/runset.config.yaml',
).environments;

interface Stored {
  size: number;
  files: number;
  commit: string | null;
  tests: readonly TestSpec[];
}

interface FakeSuites {
  url: string;
  versions: Map<string, Stored>;
  names: Map<string, string>;
  requests: Array<{ method: string; path: string; body: Buffer }>;
  close(): Promise<void>;
}

const servers = new Set<Server>();
after(() => assert.equal(servers.size, 0, 'a fake server was left running'));

async function startFakeSuites(): Promise<FakeSuites> {
  const versions = new Map<string, Stored>();
  const names = new Map<string, string>();
  const requests: FakeSuites['requests'] = [];
  const view = (id: string) => {
    const v = versions.get(id)!;
    return { id, size: v.size, files: v.files, createdAt: '2026-11-27T00:00:00.000Z', commit: v.commit, names: [...names].filter(([, to]) => to === id).map(([n]) => n), sets: 0, lastSetAt: null };
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' });
    res.end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const id = /^\/api\/v0\/suites\/([^/]+)$/.exec(url.pathname)?.[1];
    if (req.method === 'GET' && id !== undefined) return versions.has(id) ? send(res, 200, view(id)) : send(res, 404, { status: 404, code: 'not_found', title: 'Not Found', detail: `no suite version ${id}` });
    if (req.method === 'GET' && url.pathname === '/api/v0/suites') return send(res, 200, { versions: [...versions.keys()].map(view) });
    if (req.method === 'PUT' && id !== undefined) {
      assert.equal(req.headers['content-type'], 'application/gzip');
      if (versions.has(id)) return send(res, 200, view(id));
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'runset-fake-upload-')), 'suite.tgz');
      writeFileSync(file, body);
      try {
        const seen = await inspectSuiteArchive(file, { id, maxBytes: 50_000_000 });
        const config = parseSuiteTests(seen.configText, `${VERSION_ROOT}/${SUITE_CONFIG_FILE}`, SERVER_ENVS, seen.paths);
        const tests = applySuiteListing(config, seen.listing ?? { version: 1, reports: [] }).tests;
        versions.set(id, { size: seen.size, files: seen.files, commit: url.searchParams.get('commit'), tests });
      } catch (error) {
        return send(res, 422, { status: 422, code: 'suite_refused', title: 'Unprocessable', detail: (error as Error).message });
      }
      const name = url.searchParams.get('name');
      if (name) names.set(name, id);
      return send(res, 201, view(id));
    }
    if (req.method === 'POST' && url.pathname === '/api/v0/suite-names') {
      const { name, id: target } = JSON.parse(body.toString()) as { name: string; id: string };
      names.set(name, target);
      return send(res, 200, view(target));
    }
    if (req.method === 'POST' && url.pathname === '/api/v0/test-run-sets') return send(res, 201, { testRunSetId: '7d1c5a2e-7f0a-4c55-9d2a-0f1e2d3c4b5a' });
    return send(res, 404, { status: 404, code: 'not_found', title: 'Not Found', detail: 'no route' });
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', path: req.url ?? '', body });
      handle(req, res, body).catch((error: Error) => send(res, 500, { status: 500, code: 'internal', title: 'Internal', detail: error.message }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.add(server);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api`,
    versions,
    names,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => (servers.delete(server), resolve()))),
  };
}

function httpSuite(extra = ''): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-push-'));
  writeFileSync(
    path.join(dir, SUITE_CONFIG_FILE),
    `environments:\n  local: { variables: { BASE_URL: "http://localhost" } }\ntests:\n  - { name: home, type: http, request: { url: "{{BASE_URL}}/" } }\n${extra}`,
  );
  mkdirSync(path.join(dir, 'node_modules/x'), { recursive: true });
  writeFileSync(path.join(dir, 'node_modules/x/index.js'), 'never packed');
  return dir;
}

test('push: packs, uploads once, says so; the same content again uploads nothing; --name names it', async () => {
  const server = await startFakeSuites();
  try {
    const env = { RUNSET_URL: server.url, RUNSET_API_KEY: KEY, GITHUB_ACTIONS: 'true', GITHUB_SHA: 'abc123' };
    const dir = httpSuite();
    const io = collector();
    assert.equal(await runSuitesPush({ dir }, env, io), 0, io.err());
    const id = io.out().trim();
    assert.match(id, /^[0-9a-f]{64}$/);
    assert.equal(createHash('sha256').update(server.requests.find((r) => r.method === 'PUT')!.body).digest('hex'), id);
    assert.equal(server.versions.get(id)?.commit, 'abc123', "the commit label defaults to the CI's");
    assert.deepEqual(server.versions.get(id)?.tests.map((t) => t.name), ['home']);
    assert.match(io.err(), new RegExp(`suite ${id}: [0-9.]+ kB, \\d+ files, uploaded`));
    assert.equal(io.err().match(/environments is ignored in an uploaded suite/g)?.length, 1, 'said once');

    const again = collector();
    assert.equal(await runSuitesPush({ dir, name: 'main', commit: 'def456' }, env, again), 0, again.err());
    assert.equal(again.out().trim(), id);
    assert.match(again.err(), /already on the server, nothing uploaded, named main/);
    assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 1, 'nothing uploaded twice');
    assert.equal(server.names.get('main'), id);
    assert.ok(!server.requests.some((r) => r.body.includes('never packed')));
  } finally {
    await server.close();
  }
});

test('trigger --suite DIR pushes and creates the set with the id; --suite-name sends the name and pushes nothing', async () => {
  const server = await startFakeSuites();
  try {
    const env = { RUNSET_URL: server.url, RUNSET_API_KEY: KEY };
    const io = collector();
    assert.equal(await runTriggerCommand(['--env', 'preview', '--suite', httpSuite(), '--no-ci-labels'], env, io), 0, io.err());
    const id = [...server.versions.keys()][0]!;
    const create = server.requests.find((r) => r.path === '/api/v0/test-run-sets')!;
    assert.deepEqual(JSON.parse(create.body.toString()), { env: 'preview', suite: id });

    server.requests.length = 0;
    const named = collector();
    assert.equal(await runTriggerCommand(['--env', 'preview', '--suite-name', 'pr-42', '--no-ci-labels'], env, named), 0, named.err());
    assert.deepEqual(server.requests.map((r) => `${r.method} ${r.path}`), ['POST /api/v0/test-run-sets']);
    assert.deepEqual(JSON.parse(server.requests[0]!.body.toString()), { env: 'preview', suite: 'pr-42' });
    const bad = collector();
    assert.equal(await runTriggerCommand(['--env', 'preview', '--suite-name', '../x'], env, bad), 3);
    assert.match(bad.err(), /expected a name such as main/);
  } finally {
    await server.close();
  }
});

test("a suite with Playwright: listed here with the checkout's Playwright, expanded by the server from the listing", async () => {
  const server = await startFakeSuites();
  try {
    const io = collector();
    assert.equal(await runSuitesPush({ dir: DEMO }, { RUNSET_URL: server.url, RUNSET_API_KEY: KEY }, io), 0, io.err());
    const tests = server.versions.get(io.out().trim())!.tests;
    const cases = tests.filter((t) => t.type === 'playwright');
    assert.ok(cases.length > 0, 'Playwright cases listed');
    assert.ok(cases.every((t) => t.type === 'playwright' && t.case !== undefined && t.dir === `${VERSION_ROOT}/e2e`));
  } finally {
    await server.close();
  }
});

test('push failures say what was wrong and exit 3, before anything is sent', async () => {
  const server = await startFakeSuites();
  try {
    const env = { RUNSET_URL: server.url, RUNSET_API_KEY: KEY };
    const empty = collector();
    assert.equal(await runSuitesPush({ dir: mkdtempSync(path.join(tmpdir(), 'runset-push-')) }, env, empty), 3);
    assert.match(empty.err(), /runset\.config\.yaml cannot be read \(ENOENT\); --suite and push take the folder/);
    const broken = collector();
    assert.equal(await runSuitesPush({ dir: httpSuite('  - { name: x, type: playwright, dir: nowhere }\n') }, env, broken), 3);
    assert.match(broken.err(), /tests\[1\]\.dir: "nowhere" is not a folder/);
    assert.equal(server.requests.length, 0);
    assert.ok(!broken.err().includes(KEY));
  } finally {
    await server.close();
  }
});

test('suites list: a table, or JSON', async () => {
  const server = await startFakeSuites();
  try {
    const env = { RUNSET_URL: server.url, RUNSET_API_KEY: KEY };
    const none = collector();
    assert.equal(await runSuitesList(false, env, none), 0);
    assert.match(none.out(), /no suite versions/);
    await runSuitesPush({ dir: httpSuite(), name: 'main' }, env, collector());
    const table = collector();
    assert.equal(await runSuitesList(false, env, table), 0, table.err());
    assert.match(table.out(), /^ID +SIZE +FILES +CREATED +COMMIT +SETS +NAMES\n[0-9a-f]{12} .* main\n$/);
    const json = collector();
    await runSuitesList(true, env, json);
    assert.equal((JSON.parse(json.out()) as unknown[]).length, 1);
  } finally {
    await server.close();
  }
});
