import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveSetStatus, RUN_STATES, setPhase, type Counts } from '../../src/core/states.js';
import { canMakeMove, canMoveMember, failsSet, moveSet, reapedTo, stampMember, startsAtClaim } from '../../src/core/moves.js';

const c = (WAITING: number, RUNNING: number, SUCCESS: number, FAIL: number): Counts => ({ WAITING, RUNNING, SUCCESS, FAIL });

test('a set is WAITING until a member has started', () => {
  assert.equal(deriveSetStatus(c(3, 0, 0, 0), false, 0), 'WAITING');
});

test('a set is RUNNING once a member started and until all ended', () => {
  assert.equal(deriveSetStatus(c(2, 1, 0, 0), true, 0), 'RUNNING');
  assert.equal(deriveSetStatus(c(1, 0, 1, 0), true, 0), 'RUNNING');
  assert.equal(deriveSetStatus(c(0, 1, 0, 1), true, 1), 'RUNNING', 'one failure does not end the set early');
});

test('a set never moves backwards when a member goes back to WAITING', () => {
  assert.equal(deriveSetStatus(c(3, 0, 0, 0), true, 0), 'RUNNING');
});

test('SUCCESS only when all ended and all passed; FAIL when all ended and one failed', () => {
  assert.equal(deriveSetStatus(c(0, 0, 4, 0), true, 0), 'SUCCESS');
  assert.equal(deriveSetStatus(c(0, 0, 3, 1), true, 1), 'FAIL');
  assert.equal(deriveSetStatus(c(0, 0, 0, 2), true, 2), 'FAIL');
});

test('an empty set is never SUCCESS', () => {
  assert.notEqual(deriveSetStatus(c(0, 0, 0, 0), false, 0), 'SUCCESS');
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
  const cancelled = moveSet({ counts: c(1, 0, 0, 0), failing: 0, startedAt: null }, 'WAITING', 'FAIL', t2, true);
  assert.deepEqual(cancelled, { counts: c(0, 0, 0, 1), failing: 1, status: 'FAIL', startedAt: t2, endedAt: t2 });
  const started = moveSet({ counts: c(2, 0, 0, 0), failing: 0, startedAt: null }, 'WAITING', 'RUNNING', t1, false);
  assert.deepEqual(moveSet(started, 'RUNNING', 'WAITING', t2, false), { counts: c(2, 0, 0, 0), failing: 0, status: 'RUNNING', startedAt: t1, endedAt: null }, 'never backwards');
  assert.throws(() => moveSet(started, 'WAITING', 'SUCCESS', t2, false), /illegal member move/);
  assert.throws(() => moveSet(started, 'WAITING', 'RUNNING', t2, true), /cannot fail a set/);
});

test('the status rule with quarantine: a set passes when every member that is not quarantined passed; counts stay real', () => {
  const t = '2026-11-26T10:00:00.000Z';
  const plain = { quarantined: false, failOnFlaky: false };
  const quarantined = { quarantined: true, failOnFlaky: false };
  let set = moveSet({ counts: c(0, 2, 0, 0), failing: 0, startedAt: t }, 'RUNNING', 'SUCCESS', t, failsSet(plain, 'SUCCESS', 1, 'outcome'));
  set = moveSet(set, 'RUNNING', 'FAIL', t, failsSet(quarantined, 'FAIL', 1, 'outcome'));
  assert.deepEqual([set.status, set.counts, set.failing], ['SUCCESS', c(0, 0, 1, 1), 0], 'a quarantined failure is counted in FAIL and does not fail the set');
  assert.equal(failsSet(plain, 'FAIL', 1, 'outcome'), true);
  assert.equal(failsSet(quarantined, 'FAIL', 0, 'lost'), false, 'a quarantined member lost to the reaper does not fail the set either');
  assert.equal(failsSet(plain, 'FAIL', 0, 'lost'), true);
  assert.equal(failsSet(quarantined, 'FAIL', 0, 'cancel'), true, 'a cancelled set never passes, quarantined or not');
  assert.equal(failsSet(plain, 'RUNNING', 0, 'outcome'), false);
});

test('failOnFlaky: a pass after a retry fails the set, unless quarantined; a first-try pass never does', () => {
  const flakyFails = { quarantined: false, failOnFlaky: true };
  assert.equal(failsSet(flakyFails, 'SUCCESS', 2, 'outcome'), true);
  assert.equal(failsSet(flakyFails, 'SUCCESS', 1, 'outcome'), false);
  assert.equal(failsSet({ quarantined: false, failOnFlaky: false }, 'SUCCESS', 3, 'outcome'), false, 'off by default');
  assert.equal(failsSet({ quarantined: true, failOnFlaky: true }, 'SUCCESS', 2, 'outcome'), false);
  const t = '2026-11-26T10:00:00.000Z';
  const set = moveSet({ counts: c(0, 1, 0, 0), failing: 0, startedAt: t }, 'RUNNING', 'SUCCESS', t, failsSet(flakyFails, 'SUCCESS', 2, 'outcome'));
  assert.deepEqual([set.status, set.counts], ['FAIL', c(0, 0, 1, 0)], 'FAIL with every member in SUCCESS');
});

test('a claim starts a member only when nothing stands before its test: no batch, no suite version to prepare', () => {
  assert.equal(startsAtClaim({ batchKey: null, suiteVersion: null }), true);
  assert.equal(startsAtClaim({ batchKey: null }), true, 'a claim from before versions existed');
  assert.equal(startsAtClaim({ batchKey: 'entry', suiteVersion: null }), false);
  assert.equal(startsAtClaim({ batchKey: null, suiteVersion: 'a'.repeat(64) }), false);
});

test('a set\'s phase beside its status: queued, waiting, preparing while a worker holds members none began, running, ended', () => {
  assert.equal(setPhase('WAITING', true, 0), 'queued');
  assert.equal(setPhase('WAITING', false, 0), 'waiting');
  assert.equal(setPhase('WAITING', false, 3), 'preparing');
  assert.equal(setPhase('RUNNING', false, 3), 'running', 'held members of a running set wait their turn in a share');
  assert.equal(setPhase('FAIL', false, 0), 'ended');
  assert.equal(setPhase('SUCCESS', false, 0), 'ended');
});
