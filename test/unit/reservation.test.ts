/**
 * A slot's reservation of its next member (src/scheduler/reservation.ts):
 * taken while fresh, given back when held too long or taken too late.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import type { ClaimedRun } from '../../src/core/types.js';
import { Reservation } from '../../src/scheduler/reservation.js';
import { commandSpec } from '../helpers/fake-link.js';

const run: ClaimedRun = { id: 'r1', setId: 's', env: 'staging', spec: commandSpec('t'), expectedMs: 1, variables: {}, claim: 1, workerId: 'w', batchKey: null };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('taken within its hold: the slot gets the member, nothing goes back', async () => {
  const back: ClaimedRun[] = [];
  const r = new Reservation(run, performance.now(), 50, (x) => back.push(x));
  assert.equal(r.take(10_000), run);
  assert.equal(r.take(10_000), undefined, 'once');
  await sleep(80);
  assert.deepEqual(back, [], 'its hold timer was stopped');
  assert.equal(r.late, false);
});

test('held past its hold: given back once, and the slot gets nothing', async () => {
  const back: ClaimedRun[] = [];
  const r = new Reservation(run, performance.now(), 20, (x) => back.push(x));
  await sleep(50);
  assert.deepEqual(back, [run]);
  assert.equal(r.take(10_000), undefined);
  assert.deepEqual(back, [run], 'not twice');
  assert.equal(r.late, false);
});

test('taken after half its lease went by (the process was frozen): given back as late', () => {
  const back: ClaimedRun[] = [];
  const r = new Reservation(run, performance.now() - 600, 10_000, (x) => back.push(x));
  assert.equal(r.take(1000), undefined);
  assert.equal(r.late, true);
  assert.deepEqual(back, [run]);
  assert.equal(r.runId, 'r1');
});
