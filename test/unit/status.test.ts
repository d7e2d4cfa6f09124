import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveSetStatus, RUN_STATES, type Counts } from '../../src/core/states.js';
import { canMakeMove, canMoveMember, moveSet, reapedTo, stampMember } from '../../src/core/moves.js';

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

test('moves by kind: a reserved member may only fail, a heartbeat moves nothing', () => {
  assert.ok(canMakeMove('finish', 'WAITING', 'FAIL'));
  assert.ok(!canMakeMove('finish', 'WAITING', 'SUCCESS'));
  assert.ok(!canMakeMove('heartbeat', 'RUNNING', 'WAITING'));
  assert.ok(!canMakeMove('cancel', 'SUCCESS', 'FAIL'));
});

test('the reap rule: back to WAITING until the maxLostLeases-th lost lease, then FAIL', () => {
  assert.equal(reapedTo(0, 3), 'WAITING');
  assert.equal(reapedTo(1, 3), 'WAITING');
  assert.equal(reapedTo(2, 3), 'FAIL');
  assert.equal(reapedTo(0, 1), 'FAIL');
});

test('timestamps: a member keeps its first start; a set that ends before any member started, started when it ended', () => {
  const t1 = '2026-11-26T10:00:00.000Z';
  const t2 = '2026-11-26T10:00:01.000Z';
  assert.deepEqual(stampMember({ startedAt: t1, endedAt: null }, 'RUNNING', t2), { startedAt: t1, endedAt: null }, 'claimed again after a lost lease');
  assert.deepEqual(stampMember({ startedAt: null, endedAt: null }, 'FAIL', t2), { startedAt: null, endedAt: t2 }, 'cancelled before it ran');
  const cancelled = moveSet({ counts: c(1, 0, 0, 0), startedAt: null }, 'WAITING', 'FAIL', t2);
  assert.deepEqual(cancelled, { counts: c(0, 0, 0, 1), status: 'FAIL', startedAt: t2, endedAt: t2 });
  const started = moveSet({ counts: c(2, 0, 0, 0), startedAt: null }, 'WAITING', 'RUNNING', t1);
  assert.deepEqual(moveSet(started, 'RUNNING', 'WAITING', t2), { counts: c(2, 0, 0, 0), status: 'RUNNING', startedAt: t1, endedAt: null }, 'never backwards');
  assert.throws(() => moveSet(started, 'WAITING', 'SUCCESS', t2), /illegal member move/);
});
