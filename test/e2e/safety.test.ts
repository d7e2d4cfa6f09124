/** Overrides that cannot aim tests anywhere, end to end: constrained overrides (400) and the outbound rules (the member's error). */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertNoLeakedServers, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';

let target: Server;
let server: RunningServer;

before(async () => {
  target = createServer((_req, res) => res.end('welcome'));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const app = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  server = await startRunset({
    config: [
      'environments:',
      '  strict:',
      '    variables:',
      `      BASE_URL: { value: "${app}", allow: ["http://127.0.0.1:*", "http://2852039166", "http://10.255.255.1:8081"] }`,
      '  lan:',
      '    allowPrivateTargets: true',
      `    variables: { BASE_URL: "${app}" }`,
      'tests:',
      '  - { name: home, type: http, timeoutSeconds: 2, request: { url: "{{BASE_URL}}/" }, expect: { bodyContains: welcome } }',
      '',
    ].join('\n'),
  });
});

after(async () => {
  await server.stop();
  target.closeAllConnections();
  await new Promise((resolve) => target.close(resolve));
  assertNoLeakedServers();
});

async function memberError(env: string, baseUrl?: string): Promise<{ status: string; error: string | null }> {
  const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env, ...(baseUrl ? { envOverride: { BASE_URL: baseUrl } } : {}) } });
  assert.equal(created.status, 200, created.text);
  const id = created.body.testRunSetId as string;
  const status = await waitForSet(server, id);
  const members = await api<{ testRuns: Array<{ error: string | null }> }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
  return { status: status.status, error: members.body.testRuns[0]?.error ?? null };
}

test('an override outside the allowed forms is 400 override_not_allowed naming the variable and the forms', async () => {
  const refused = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'strict', envOverride: { BASE_URL: 'https://evil.example' } } });
  assert.equal(refused.status, 400);
  assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.deepEqual(Object.keys(refused.body).sort(), ['code', 'detail', 'status', 'title', 'type']);
  assert.equal(refused.body.code, 'override_not_allowed');
  assert.equal(
    refused.body.detail,
    'envOverride.BASE_URL: "https://evil.example" is not an override BASE_URL allows; allowed: a value matching one of the globs ' +
      '"http://127.0.0.1:*", "http://2852039166", "http://10.255.255.1:8081" (* for any characters but / ? # @ \\ and spaces, ** for any characters)',
  );
  assert.equal((await memberError('strict')).status, 'SUCCESS', 'the declared value still works');

  // The dashboard's trigger form learns the same forms before anything is sent.
  const listed = await api<{ environments: Array<{ name: string; variables: Array<{ name: string; accepts: string | null }> }> }>(server, 'GET', '/v0/environments');
  const baseUrl = listed.body.environments.find((e) => e.name === 'strict')?.variables.find((v) => v.name === 'BASE_URL');
  assert.equal(baseUrl?.accepts, refused.body.detail.replace(/^.*; allowed: /, ''));
});

test('a target that passed the override rule still meets the outbound rules: metadata refused, private only where allowed', async () => {
  const metadata = await memberError('strict', 'http://2852039166');
  assert.equal(metadata.status, 'FAIL');
  assert.match(metadata.error ?? '', /^GET http:\/\/2852039166\/ failed: refused: 169\.254\.169\.254 is a cloud metadata address; runset never sends requests there$/);
  const lanRefused = await memberError('strict', 'http://10.255.255.1:8081');
  assert.match(lanRefused.error ?? '', /refused: 10\.255\.255\.1 is a private address .*allowPrivateTargets: true$/);
  const lanAllowed = await memberError('lan', 'http://10.255.255.1:8081');
  assert.equal(lanAllowed.status, 'FAIL', 'nothing listens there');
  assert.doesNotMatch(lanAllowed.error ?? '', /refused: /, 'allowPrivateTargets lets the request be attempted');
  const lanMetadata = await memberError('lan', 'http://[::ffff:a9fe:a9fe]/');
  assert.match(lanMetadata.error ?? '', /refused: ::ffff:a9fe:a9fe is a cloud metadata address/, 'never metadata, even with allowPrivateTargets');
});
