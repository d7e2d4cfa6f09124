/**
 * The served OpenAPI document, checked by tools nobody here wrote: Redocly's
 * linter (recommended rules), and a client generated from it with
 * openapi-typescript, compiled with tsc beside the SDK and run against the live
 * server. A change that breaks generators fails here.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { api, assertNoLeakedServers, REPO_ROOT, startRunset, tempDir, type RunningServer } from '../helpers/server.js';
import { MIXED_CONFIG, SECRET_VALUE } from './fixtures.js';

const run = promisify(execFile);
const bin = (pkg: string, file: string) => path.join(REPO_ROOT, 'node_modules', pkg, file);
/** No telemetry, no update check: nothing may reach the network from a test. */
const OFFLINE = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

interface Response { description?: string; content?: Record<string, { schema?: { $ref?: string } }> }
interface Operation { operationId: string; description?: string; tags?: string[]; security?: unknown[]; responses: Record<string, Response>; requestBody?: unknown }
interface Doc { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } }

function operations(doc: Doc): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([p, item]) => Object.entries(item).map(([m, op]) => [`${m.toUpperCase()} ${p}`, op] as [string, Operation]));
}

const PROGRAM = `
import createClient from 'openapi-fetch';
import { RunsetClient, type TestRunSetStatus } from 'runset/client';
import type { components, paths } from './schema.js';

type GeneratedStatus = components['schemas']['TestRunSetStatus'];
type GeneratedProblem = components['schemas']['Problem'];
// What the generated client reads is what the SDK promises.
const asSdk = (s: GeneratedStatus): TestRunSetStatus => s;

const baseUrl = process.env.RUNSET_URL!;
const apiKey = process.env.RUNSET_API_KEY!;
const client = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + apiKey } });

const created = await client.POST('/v0/test-run-sets', { body: { env: 'staging', envOverride: { GREETING: 'hello' } } });
if (!created.data) throw new Error('create failed: ' + JSON.stringify(created.error));
const id: string = created.data.testRunSetId;
const read = await client.GET('/v0/test-run-sets/{id}', { params: { path: { id } } });
if (!read.data) throw new Error('status failed');
const status: GeneratedStatus = read.data;
const missing = await client.GET('/v0/test-run-sets/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
const problem: GeneratedProblem | undefined = missing.error;
const sdk = await new RunsetClient({ url: baseUrl, apiKey }).getTestRunSet(id);
console.log(JSON.stringify({ id, status: asSdk(status).status, counts: status.progress.counts, problem: problem?.code, sdkId: sdk?.id }));
`;

describe('the OpenAPI document, as tools see it', () => {
  let server: RunningServer;
  let doc: Doc;
  const dir = tempDir('runset-openapi-');
  before(async () => {
    server = await startRunset({ config: MIXED_CONFIG, env: { E2E_SECRET_TOKEN: SECRET_VALUE }, args: ['--workers', '1'] });
    const res = await api<Doc>(server, 'GET', '/openapi.json', { auth: null });
    assert.equal(res.status, 200);
    doc = res.body;
    writeFileSync(path.join(dir, 'openapi.json'), res.text);
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  });

  test('redocly lint (recommended rules) passes: no error, and no warning but "health has no 4XX"', async () => {
    const lint = await run(process.execPath, [bin('@redocly/cli', 'bin/cli.js'), 'lint', path.join(dir, 'openapi.json'), '--format=json'], { env: OFFLINE }).catch(
      (err: { stdout: string; stderr: string }) => assert.fail(`redocly lint failed:\n${err.stdout}\n${err.stderr}`),
    );
    const report = JSON.parse(lint.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; location: Array<{ pointer: string }> }> };
    assert.equal(report.totals.errors, 0);
    const warnings = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`);
    // /health answers 200 or 503 and nothing a client could get wrong: no 4XX to document.
    assert.deepEqual(warnings, ['operation-4xx-response #/paths/~1health/get/responses']);
  });

  test('named components, problem+json errors, every status described, public operations say so', () => {
    const names = Object.keys(doc.components.schemas);
    for (const name of ['TestRunSetStatus', 'CreateTestRunSetBody', 'CreateTestRunSetResult', 'Problem', 'TestRun']) assert.ok(names.includes(name), name);
    assert.deepEqual(names.filter((n) => /^def-\d+$/.test(n)), [], 'no def-N component');
    for (const [name, op] of operations(doc)) {
      assert.ok(op.description, `${name}: a description`);
      assert.ok(op.tags?.length, `${name}: a tag`);
      assert.ok(op.security, `${name}: security stated (an empty list for public operations)`);
      for (const status of ['500', '503']) assert.ok(op.responses[status], `${name}: ${status} documented`);
      if (name.startsWith('POST') || name.startsWith('DELETE')) for (const status of ['413', '415']) assert.ok(op.responses[status], `${name}: ${status} documented`);
      for (const [status, response] of Object.entries(op.responses)) {
        assert.ok(response.description && response.description !== 'Default Response', `${name} ${status}: a description`);
        if (Number(status) >= 400 && !(name === 'GET /health' && status === '503')) {
          assert.deepEqual(Object.keys(response.content ?? {}), ['application/problem+json'], `${name} ${status}`);
          assert.equal(response.content?.['application/problem+json']?.schema?.$ref, '#/components/schemas/Problem');
        }
      }
    }
    assert.deepEqual(doc.paths['/health']?.get?.security, []);
    assert.deepEqual(doc.paths['/v0/session']?.post?.security, []);
    const id = (doc.paths['/v0/test-run-sets/{id}']?.get as unknown as { parameters: Array<{ name: string; schema: Record<string, string> }> }).parameters.find((p) => p.name === 'id');
    assert.equal(id?.schema.format, 'uuid');
    assert.ok(id?.schema.pattern, 'the pattern is kept beside the format');
    assert.ok(doc.paths['/v0/test-run-sets/{id}']?.get?.responses['304'], 'the conditional read keeps its 304');
  });

  test('openapi-typescript + openapi-fetch: a generated client compiles with tsc beside the SDK, and works against the server', async () => {
    // Inside the repository (its package.json: ESM, and `runset/client` resolves to itself) so that
    // `openapi-fetch` and the SDK resolve as in a user's project.
    const project = path.join(REPO_ROOT, 'dist', `generated-client-${process.pid}`);
    mkdirSync(project, { recursive: true });
    try {
      await run(process.execPath, [bin('openapi-typescript', 'bin/cli.js'), path.join(dir, 'openapi.json'), '-o', path.join(project, 'schema.ts')], { env: OFFLINE });
      writeFileSync(path.join(project, 'program.ts'), PROGRAM);
      const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, types: ['node'] };
      writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, rootDir: '.', outDir: 'out' }, files: ['program.ts', 'schema.ts'] }));
      // The SDK's own sources, compiled on their own with the same strictness.
      writeFileSync(path.join(project, 'tsconfig.sdk.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, rootDir: REPO_ROOT, noEmit: true }, files: [path.join(REPO_ROOT, 'src/client/index.ts')] }));
      const tsc = bin('typescript', 'bin/tsc');
      for (const config of ['tsconfig.json', 'tsconfig.sdk.json']) {
        await run(process.execPath, [tsc, '-p', path.join(project, config)]).catch((err: { stdout: string }) => assert.fail(`tsc -p ${config}:\n${err.stdout}`));
      }
      const out = await run(process.execPath, [path.join(project, 'out', 'program.js')], {
        env: { ...process.env, RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey },
      });
      const seen = JSON.parse(out.stdout) as { id: string; status: string; counts: Record<string, number>; problem: string; sdkId: string };
      assert.match(seen.status, /^(WAITING|RUNNING|SUCCESS|FAIL)$/);
      assert.deepEqual(Object.keys(seen.counts), ['WAITING', 'RUNNING', 'SUCCESS', 'FAIL']);
      assert.equal(seen.problem, 'not_found');
      assert.equal(seen.sdkId, seen.id);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});

after(() => assertNoLeakedServers());
