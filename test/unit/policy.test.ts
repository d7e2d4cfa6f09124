/** The access policy alone: roles, operations, environments, expiry, what a key may grant. No store, no HTTP. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allowedOperations,
  createRefusal,
  describeRights,
  grantRefusal,
  isExpired,
  listableEnvs,
  managesKey,
  operationRefusal,
  OPERATION_ROLES,
  requiredRole,
  seesEnv,
  type KeyScope,
} from '../../src/auth/policy.js';

const key = (role: KeyScope['role'], envs: string[] | null = null, expiresAt: string | null = null): KeyScope => ({ role, envs, expiresAt });

test('each role may do what the roles below it may, and no more', () => {
  const read = new Set(allowedOperations(key('read')));
  const trigger = new Set(allowedOperations(key('trigger')));
  const admin = new Set(allowedOperations(key('admin')));
  assert.deepEqual([...admin].sort(), Object.keys(OPERATION_ROLES).sort());
  for (const op of read) assert.ok(trigger.has(op), op);
  for (const op of trigger) assert.ok(admin.has(op), op);
  assert.ok(read.has('getTestRunSet') && read.has('getArtifact') && read.has('listWorkers') && read.has('listWebhookDeliveries'));
  assert.ok(!read.has('createTestRunSet') && !read.has('cancelTestRunSet') && !read.has('rerunTestRunSet'));
  assert.ok(trigger.has('createTestRunSet') && trigger.has('cancelTestRunSet') && trigger.has('rerunTestRunSet'));
  assert.ok(!trigger.has('createKey') && !trigger.has('listKeys') && !trigger.has('revokeKey'));
});

test('an operation without a rule is refused to every role', () => {
  assert.equal(requiredRole('somethingNew'), undefined);
  assert.equal(requiredRole('toString'), undefined, 'no inherited property counts as a rule');
  assert.equal(requiredRole(undefined), undefined);
  assert.match(operationRefusal(key('admin'), 'somethingNew')!, /somethingNew has no access rule/);
});

test('a refusal says what is needed and what the key may do', () => {
  assert.equal(operationRefusal(key('trigger'), 'cancelTestRunSet'), undefined);
  assert.equal(
    operationRefusal(key('read', ['staging']), 'cancelTestRunSet'),
    'cancelTestRunSet needs role trigger or above; this key has role read: it may read sets, members, artifacts, environments, workers, suite versions and quarantined tests, only in environment staging',
  );
  assert.match(describeRights(key('admin')), /create, run again and cancel sets, upload suite versions, and quarantine tests, also manage keys and use the worker protocol, in every environment$/);
});

test('environments: a scoped key sees and creates only in its own; lists are narrowed, never widened', () => {
  const scoped = key('trigger', ['staging', 'preview']);
  assert.ok(seesEnv(scoped, 'staging') && !seesEnv(scoped, 'production'));
  assert.ok(seesEnv(key('read'), 'anything'));
  assert.equal(createRefusal(scoped, 'preview'), undefined);
  assert.match(createRefusal(scoped, 'production')!, /may not create sets in environment production.*only in environments staging, preview/);
  assert.equal(listableEnvs(key('read'), undefined), undefined);
  assert.deepEqual(listableEnvs(key('read'), 'x'), ['x']);
  assert.deepEqual(listableEnvs(scoped, undefined), ['staging', 'preview']);
  assert.deepEqual(listableEnvs(scoped, 'preview'), ['preview']);
  assert.deepEqual(listableEnvs(scoped, 'production'), []);
});

test('expiry: refused from the instant it passes', () => {
  const at = Date.parse('2030-01-01T00:00:00.000Z');
  assert.equal(isExpired(key('admin'), at), false);
  assert.equal(isExpired(key('admin', null, '2030-01-01T00:00:00.001Z'), at), false);
  assert.equal(isExpired(key('admin', null, '2030-01-01T00:00:00.000Z'), at), true);
});

test('a key never grants more than its maker, and a scoped admin manages only keys within its scope', () => {
  assert.equal(grantRefusal(key('admin'), { role: 'admin', envs: null }), undefined);
  assert.match(grantRefusal(key('trigger'), { role: 'admin', envs: null })!, /higher role/);
  const scopedAdmin = key('admin', ['staging']);
  assert.match(grantRefusal(scopedAdmin, { role: 'read', envs: null })!, /limited to its own environments \(staging\)/);
  assert.match(grantRefusal(scopedAdmin, { role: 'read', envs: ['staging', 'preview'] })!, /own environments/);
  assert.equal(grantRefusal(scopedAdmin, { role: 'read', envs: ['staging'] }), undefined);
  assert.ok(managesKey(key('admin'), { envs: null }));
  assert.ok(!managesKey(scopedAdmin, { envs: null }));
  assert.ok(managesKey(scopedAdmin, { envs: ['staging'] }));
});

test('a worker key may use the worker protocol and nothing else; admin keys may use it too, read and trigger keys may not', () => {
  const protocol = Object.entries(OPERATION_ROLES).filter(([, role]) => role === 'worker').map(([op]) => op).sort();
  assert.ok(protocol.includes('claimRuns') && protocol.includes('finishRun') && protocol.includes('uploadArtifact') && protocol.includes('workerNotices'));
  assert.deepEqual(allowedOperations(key('worker')).sort(), protocol);
  for (const op of protocol) {
    assert.equal(operationRefusal(key('admin'), op), undefined, op);
    assert.match(operationRefusal(key('trigger'), op)!, new RegExp(`${op} needs role worker \\(or admin\\); this key has role trigger`));
  }
  assert.equal(
    operationRefusal(key('worker', ['staging']), 'getTestRunSet'),
    'getTestRunSet needs role read or above; this key has role worker: it may use the worker protocol only (claim and run members, report outcomes, upload artifacts), only in environment staging',
  );
  assert.equal(grantRefusal(key('admin'), { role: 'worker', envs: null }), undefined);
  assert.match(grantRefusal(key('trigger'), { role: 'worker', envs: null })!, /higher role/);
  assert.match(grantRefusal(key('worker'), { role: 'read', envs: null })!, /higher role/);
});
