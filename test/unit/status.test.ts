import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canMoveMember, deriveSetStatus, RUN_STATES, type Counts } from '../../src/core/states.js';

const c = (WAITING: number, RUNNING: number, SUCCESS: number, FAIL: number): Counts => ({ WAITING, RUNNING, SUCCESS, FAIL });

test('a set is WAITING until a member has started', () => {
  assert.equal(deriveSetStatus(c(3, 0, 0, 0), false), 'WAITING');
});

test('a set is RUNNING once a member started and until all ended', () => {
  assert.equal(deriveSetStatus(c(2, 1, 0, 0), true), 'RUNNING');
  assert.equal(deriveSetStatus(c(1, 0, 1, 0), true), 'RUNNING');
  assert.equal(deriveSetStatus(c(0, 1, 0, 1), true), 'RUNNING', 'one failure does not end the set early');
});

test('a set never moves backwards when a member goes back to WAITING', () => {
  assert.equal(deriveSetStatus(c(3, 0, 0, 0), true), 'RUNNING');
});

test('SUCCESS only when all ended and all passed; FAIL when all ended and one failed', () => {
  assert.equal(deriveSetStatus(c(0, 0, 4, 0), true), 'SUCCESS');
  assert.equal(deriveSetStatus(c(0, 0, 3, 1), true), 'FAIL');
  assert.equal(deriveSetStatus(c(0, 0, 0, 2), true), 'FAIL');
});

test('an empty set is never SUCCESS', () => {
  assert.notEqual(deriveSetStatus(c(0, 0, 0, 0), false), 'SUCCESS');
});

test('member transitions: nothing leaves a final state, no skipping back', () => {
  assert.deepEqual(RUN_STATES, ['WAITING', 'RUNNING', 'SUCCESS', 'FAIL']);
  assert.ok(canMoveMember('WAITING', 'RUNNING'));
  assert.ok(canMoveMember('RUNNING', 'SUCCESS'));
  assert.ok(canMoveMember('RUNNING', 'WAITING'));
  assert.ok(!canMoveMember('SUCCESS', 'FAIL'));
  assert.ok(!canMoveMember('FAIL', 'RUNNING'));
  assert.ok(!canMoveMember('WAITING', 'SUCCESS'));
});
