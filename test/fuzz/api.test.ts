/**
 * Property-based fuzzing of the API from its own OpenAPI document, against a
 * real server on each store (SQLite; PostgreSQL when RUNSET_TEST_DATABASE_URL
 * is set): never a 5xx, every status documented and every body valid against
 * the document, no stack trace, no secret value (in responses or the server's
 * log), no credential getting more than its role allows.
 *
 * Bounded: FUZZ_RUNS requests per store (default 2000), from a fixed seed unless
 * FUZZ_SEED says otherwise (a number replays a run; `random` explores). `npm run
 * fuzz` runs a longer one from a random seed.
 */
import { randomBytes } from 'node:crypto';
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { api, assertNoLeakedServers, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';
import { dropSchemas, newSchemaName, NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { OpenApiModel } from './openapi-model.js';
import { requestArbitrary, type FuzzKey, type FuzzRequest, type Hints } from './requests.js';
import { check, type FuzzResponse } from './checks.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
// `npm test` is a gate: a fixed seed, so the same code gets the same answer. `npm run fuzz`
// explores (FUZZ_SEED=random picks a fresh seed each run).
const FIXED_SEED = 20261125;
const SEED = process.env.FUZZ_SEED === 'random' ? randomBytes(4).readInt32LE(0) : Number(process.env.FUZZ_SEED ?? FIXED_SEED);
if (!Number.isInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer or "random", not ${JSON.stringify(process.env.FUZZ_SEED)}`);
const TIMEOUT_MS = 60_000 + RUNS * 60;

const SECRET_TOKEN = `fz-secret-${randomBytes(12).toString('hex')}`;
const SECRET_OVERRIDE = `fz-override-${randomBytes(12).toString('hex')}`;

const CONFIG = `environments:
  staging:
    variables:
      BASE_URL: { value: "http://127.0.0.1:1", allow: ["http://127.0.0.1:*"] }
      TOKEN: \${env:FUZZ_SECRET_TOKEN}
      GREETING: hello
  preview:
tests:
  - { name: passes, type: command, run: ["true"] }
  - { name: greets, type: command, run: [node, -e, "console.log(process.env.GREETING, process.env.TOKEN)"] }
  - { name: checks, type: http, environments: [staging], timeoutSeconds: 5, request: { url: "{{BASE_URL}}/", headers: { Authorization: "Bearer {{TOKEN}}" } } }
`;

after(() => assertNoLeakedServers());

test('fuzz on SQLite', { timeout: TIMEOUT_MS }, async (t) => {
  const server = await startRunset({ config: CONFIG, args: serverArgs(), env: { FUZZ_SECRET_TOKEN: SECRET_TOKEN } });
  try {
    await fuzz(t, server, 'SQLite');
  } finally {
    await server.stop();
  }
});

test('fuzz on PostgreSQL', { timeout: TIMEOUT_MS, skip: TEST_DATABASE_URL ? false : NO_DATABASE }, async (t) => {
  const schema = newSchemaName('runset_fuzz');
  const args = [...serverArgs(), '--database-url', TEST_DATABASE_URL as string, '--database-schema', schema];
  const server = await startRunset({ config: CONFIG, args, env: { FUZZ_SECRET_TOKEN: SECRET_TOKEN } });
  try {
    await fuzz(t, server, 'PostgreSQL');
  } finally {
    await server.stop();
    await dropSchemas(TEST_DATABASE_URL as string, [schema]);
  }
});

function serverArgs(): string[] {
  return ['--workers', '2', '--sets-per-minute', '1000000'];
}

async function fuzz(t: TestContext, server: RunningServer, store: string): Promise<void> {
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  // The worker protocol holds its answers (a streamed notices response, claims waiting up to
  // 30 s): a fuzzer would time out on it rather than judge it. test/e2e/http-workers.test.ts and
  // the role table (test/e2e/access-roles.test.ts) cover it.
  for (const path of Object.keys(doc.paths)) if (path.startsWith('/v0/worker/')) delete doc.paths[path];
  const model = new OpenApiModel(doc as ConstructorParameters<typeof OpenApiModel>[0]);
  const origin = server.url.replace(/\/api$/, '') + model.prefix;
  const keys = await fuzzKeys(server);
  const hints = await seed(server);
  const secrets = [SECRET_TOKEN, SECRET_OVERRIDE, server.apiKey];
  const statuses = new Map<number, number>();
  const byOperation = new Map<string, Map<number, number>>();
  let requests = 0;
  const started = Date.now();
  console.log(`fuzz ${store}: seed ${SEED}, ${RUNS} requests (replay: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`);

  const property = fc.asyncProperty(requestArbitrary(model, keys, hints), async (generated) => {
    // Dot segments (`/v0/../..`, `/v0/test-run-sets/./rerun`) are resolved by the client's URL
    // parser: what leaves the API's prefix is a request to the dashboard (a 303 to sign-in), not
    // to the API under test, and what stays inside may reach another route than the one aimed at.
    const { pathname } = new URL(origin + generated.path);
    if (!pathname.startsWith(`${model.prefix}/`)) return;
    const request = reaching(model, generated, pathname.slice(model.prefix.length));
    const response = await send(origin, request);
    requests++;
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    const operation = request.operation ? `${request.operation.method} ${request.operation.path}` : 'other';
    const counts = byOperation.get(operation) ?? new Map<number, number>();
    byOperation.set(operation, counts.set(response.status, (counts.get(response.status) ?? 0) + 1));
    const findings = check(model, request, response, secrets);
    if (findings.violations.length > 0) throw new Error(findings.violations.join('\n'));
  });
  const result = await fc.check(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });
  const summary = {
    store,
    seed: SEED,
    requests,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b)),
    fiveHundreds: [...statuses].filter(([status]) => status >= 500).reduce((sum, [, count]) => sum + count, 0),
    byOperation: Object.fromEntries([...byOperation].sort().map(([name, counts]) => [name, Object.fromEntries([...counts].sort(([a], [b]) => a - b))])),
  };
  console.log(`fuzz ${store} summary: ${JSON.stringify(summary)}`);
  t.diagnostic(`fuzz ${store}: seed ${SEED}, ${requests} requests, statuses ${JSON.stringify(summary.statuses)}`);
  if (result.failed) assert.fail(`${String(result.errorInstance)}\n${fc.defaultReportMessage(result) ?? `fuzz failed (seed ${SEED})`}`);
  const log = server.logs();
  for (const secret of secrets) assert.ok(!log.includes(secret), `the server's log holds a secret value (${secret.slice(0, 6)}…)`);
}

/** The request as the server sees it: aimed at the operation its resolved path matches, if any. */
function reaching(model: OpenApiModel, request: FuzzRequest, resolvedPath: string): FuzzRequest {
  const generatedPath = request.path.replace(/[?#].*$/s, '');
  if (resolvedPath === generatedPath) return request;
  return { ...request, operation: model.find(request.method === 'HEAD' ? 'GET' : request.method, resolvedPath) };
}

async function send(origin: string, request: FuzzRequest): Promise<FuzzResponse> {
  const res = await fetch(origin + request.path, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(15_000),
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => (headers[name] = value));
  return { status: res.status, headers, text: await res.text() };
}

/** The credentials the fuzz sends, each with its role: a key of every role (made through the keys API), and broken ones. */
async function fuzzKeys(server: RunningServer): Promise<FuzzKey[]> {
  const roleKey = async (role: 'read' | 'trigger'): Promise<FuzzKey> => {
    const made = await api<{ token: string }>(server, 'POST', '/v0/keys', { body: { name: `fuzz ${role}`, role } });
    assert.equal(made.status, 201, made.text);
    return { label: `${role} key`, authorization: `bearer ${made.body.token}`, role };
  };
  return [
    { label: 'admin key', authorization: `Bearer ${server.apiKey}`, role: 'admin' },
    await roleKey('read'),
    await roleKey('trigger'),
    { label: 'no key', authorization: null, role: 'none' },
    { label: 'unknown key', authorization: `Bearer rs_${randomBytes(32).toString('base64url')}`, role: 'none' },
    { label: 'malformed key', authorization: 'Bearer not-a-key', role: 'none' },
    { label: 'basic auth', authorization: 'Basic dXNlcjpwYXNz', role: 'none' },
    { label: 'empty bearer', authorization: 'Bearer ', role: 'none' },
  ];
}

/** A few ended sets (one with a secret override) whose ids the fuzz uses alongside random ones. */
async function seed(server: RunningServer): Promise<Hints> {
  const ids: string[] = [];
  for (const body of [{ env: 'staging', envOverride: { TOKEN: SECRET_OVERRIDE, GREETING: 'hi' } }, { env: 'preview' }]) {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body });
    assert.equal(created.status, 200, created.text);
    const id = created.body.testRunSetId as string;
    await waitForSet(server, id, 30_000);
    ids.push(id);
    const members = await api<{ testRuns: Array<{ id: string }> }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
    ids.push(...members.body.testRuns.map((run) => run.id));
  }
  const page = await api<{ nextCursor: string | null }>(server, 'GET', '/v0/test-run-sets?limit=1');
  return {
    ids,
    strings: {
      cursor: page.body.nextCursor === null ? [] : [page.body.nextCursor],
      env: ['staging', 'preview', 'nope'],
      status: ['WAITING', 'RUNNING', 'SUCCESS', 'FAIL'],
      key: [server.apiKey, `rs_${randomBytes(32).toString('base64url')}`, 'nope'],
      mapValue: ['http://127.0.0.1:1', 'https://evil.example', 'http://169.254.169.254', ''],
    },
    mapKeys: ['BASE_URL', 'TOKEN', 'GREETING', 'BASE_ULR'],
  };
}
