/** The fuzz's oracle catches what it is there to catch (a fuzz whose checks pass everything proves nothing). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { check, DEFAULT_ROLE_RULE, type FuzzResponse } from '../fuzz/checks.js';
import { OpenApiModel } from '../fuzz/openapi-model.js';
import type { FuzzKey, FuzzRequest } from '../fuzz/requests.js';

const PROBLEM = { $ref: '#/components/schemas/Problem' };
const model = new OpenApiModel({
  paths: {
    '/v0/things/{id}': {
      get: {
        security: [{ bearerAuth: [] }],
        parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { content: { 'application/json': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } } } } },
          '404': { content: { 'application/json': { schema: PROBLEM } } },
        },
      },
    },
  },
  components: {
    schemas: {
      Problem: { type: 'object', required: ['code', 'status', 'detail'], properties: { code: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' } } },
    },
  },
});

const admin: FuzzKey = { label: 'admin', authorization: 'Bearer rs_x', role: 'admin' };
const nobody: FuzzKey = { label: 'none', authorization: null, role: 'none' };
const request = (key: FuzzKey = admin): FuzzRequest => ({
  method: 'GET',
  path: '/v0/things/abc',
  headers: {},
  body: undefined,
  key,
  operation: model.find('GET', '/v0/things/abc'),
});
const respond = (status: number, body: unknown): FuzzResponse => ({ status, headers: {}, text: typeof body === 'string' ? body : JSON.stringify(body) });
const problem = { code: 'not_found', status: 404, detail: 'no such thing' };

test('a documented status with a valid body passes', () => {
  assert.deepEqual(check(model, request(), respond(200, { id: '5b0e0000-0000-4000-8000-000000000000' }), []), { violations: [] });
  assert.deepEqual(check(model, request(), respond(404, problem), []).violations, []);
});

test('each broken promise is a violation', () => {
  const cases: Array<[FuzzResponse, RegExp, FuzzRequest?]> = [
    [respond(500, problem), /a server error/],
    [respond(503, problem), /a server error/],
    [respond(418, problem), /status not documented/],
    [respond(200, { id: 'not-a-uuid' }), /body does not match the document/],
    [respond(200, 'plain text'), /body is not JSON/],
    [respond(404, { ...problem, detail: 'Error: x\n    at handler (/srv/app/dist/src/api/x.js:10:5)' }), /a stack trace/],
    [respond(404, { ...problem, detail: 'token sekrit-123' }), /a secret value/],
    [{ status: 200, headers: { 'x-echo': 'sekrit-123' }, text: JSON.stringify({ id: '5b0e0000-0000-4000-8000-000000000000' }) }, /a secret value/],
    [respond(200, { id: '5b0e0000-0000-4000-8000-000000000000' }), /a none credential got a success/, request(nobody)],
  ];
  for (const [response, expected, sent] of cases) {
    const findings = check(model, sent ?? request(), response, ['sekrit-123']);
    assert.match(findings.violations.join('\n'), expected, JSON.stringify(response));
  }
});

test('an undocumented status is a violation; an unknown route may only be 404, or 405 with Allow, as problem+json', () => {
  assert.match(check(model, request(), respond(405, problem), []).violations.join('\n'), /status not documented for GET \/v0\/things\/\{id\}/);
  const unknown = { ...request(), path: '/v0/nothing', operation: undefined };
  assert.deepEqual(check(model, unknown, respond(404, problem), []).violations, []);
  assert.deepEqual(check(model, { ...unknown, method: 'PUT' }, { ...respond(405, problem), headers: { allow: 'GET, HEAD' } }, []).violations, []);
  assert.match(check(model, { ...unknown, method: 'PUT' }, respond(405, problem), []).violations.join('\n'), /status not documented/, '405 without Allow');
  assert.match(check(model, unknown, respond(404, { statusCode: 404, message: 'Route not found' }), []).violations.join('\n'), /is not problem\+json/);
});

test('each role gets a success only where the README says it may', () => {
  const key = (role: string): FuzzKey => ({ label: role, authorization: 'Bearer x', role });
  const op = (method: string, path: string) => ({ method, path, parameters: [], body: undefined, responses: new Map(), secured: true });
  const may = (role: string, method: string, path: string) => DEFAULT_ROLE_RULE(role, { ...request(key(role)), method, path, operation: op(method, path) });
  assert.ok(may('read', 'GET', '/v0/test-run-sets/{id}'));
  assert.ok(!may('read', 'POST', '/v0/test-run-sets'));
  assert.ok(!may('read', 'GET', '/v0/keys'));
  assert.ok(may('trigger', 'POST', '/v0/test-run-sets/{id}/cancel'));
  assert.ok(!may('trigger', 'POST', '/v0/keys'));
  assert.ok(!may('trigger', 'DELETE', '/v0/keys/{id}'));
  assert.ok(may('admin', 'DELETE', '/v0/keys/{id}'));
  assert.ok(!may('none', 'GET', '/v0/test-run-sets'));
});
