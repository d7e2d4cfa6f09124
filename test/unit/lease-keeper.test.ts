/**
 * The pool's one heartbeat (src/scheduler/lease-keeper.ts) against a fake link:
 * every lease held is beaten in the same beat, nothing is beaten once released,
 * a lost lease is told once and forgotten, a miss after the end is no news.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { LeaseKeeper, type LeaseHolder } from '../../src/scheduler/lease-keeper.js';
import { leaseOf, type LeaseRef } from '../../src/store/store.js';
import { commandSpec, FakeLink, unavailable } from '../helpers/fake-link.js';

const LEASE_MS = 150; // a beat every 50 ms
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function leased(link: FakeLink, n: number): Promise<LeaseRef[]> {
  link.add('s', Array.from({ length: n }, (_, i) => commandSpec(`t${i}`)));
  return (await link.claimRuns({ workerId: 'w', limit: n, leaseMs: LEASE_MS })).map(leaseOf);
}

function holder(over: Partial<LeaseHolder> = {}): LeaseHolder & { losses: number } {
  const h = { losses: 0, attempts: () => 1, ended: () => false, lost: () => void h.losses++, ...over };
  return h;
}

test('every lease held is beaten in each beat, with its attempts; none once released', async () => {
  const link = new FakeLink();
  const keeper = new LeaseKeeper(link, LEASE_MS, pino({ level: 'silent' }));
  const [a, b] = await leased(link, 2);
  const releaseA = keeper.hold(a!, holder({ attempts: () => 2 }));
  const releaseB = keeper.hold(b!, holder());
  await sleep(130); // two beats
  const beatsA = link.members.get(a!.runId)!.beats;
  const beatsB = link.members.get(b!.runId)!.beats;
  assert.equal(beatsA.length, 2);
  assert.equal(beatsB.length, 2, 'both leases in the same beats');
  assert.deepEqual(beatsA, [2, 2], 'the attempts ride along');
  releaseA();
  releaseB();
  assert.equal(keeper.size, 0);
  const before = link.called('heartbeat').length;
  await sleep(120);
  assert.equal(link.called('heartbeat').length, before, 'no timer runs with nothing held');
});

test('a member that ends within a beat costs no heartbeat', async () => {
  const link = new FakeLink();
  const keeper = new LeaseKeeper(link, LEASE_MS, pino({ level: 'silent' }));
  const [a] = await leased(link, 1);
  keeper.hold(a!, holder())();
  await sleep(70);
  assert.equal(link.called('heartbeat').length, 0);
});

test('a lost lease is told once and forgotten; the others are kept', async () => {
  const link = new FakeLink();
  const keeper = new LeaseKeeper(link, LEASE_MS, pino({ level: 'silent' }));
  const [a, b] = await leased(link, 2);
  const lostOne = holder();
  const kept = holder();
  keeper.hold(a!, lostOne);
  const releaseB = keeper.hold(b!, kept);
  link.steal(a!.runId);
  await sleep(130);
  assert.equal(lostOne.losses, 1);
  assert.equal(kept.losses, 0);
  assert.equal(keeper.size, 1, 'the lost lease is no longer beaten');
  releaseB();
});

test('a miss once the member ended is no news (its outcome may be committing): the lease is still kept', async () => {
  const link = new FakeLink();
  const keeper = new LeaseKeeper(link, LEASE_MS, pino({ level: 'silent' }));
  const [a] = await leased(link, 1);
  const ended = holder({ ended: () => true });
  const release = keeper.hold(a!, ended);
  link.steal(a!.runId);
  await sleep(80);
  assert.equal(ended.losses, 0);
  assert.equal(keeper.size, 1);
  release();
});

test('a heartbeat that fails (service out of reach) is tried again at the next beat, not taken as a loss', async () => {
  const link = new FakeLink();
  link.failures.heartbeat = [unavailable()];
  const keeper = new LeaseKeeper(link, LEASE_MS, pino({ level: 'silent' }));
  const [a] = await leased(link, 1);
  const h = holder();
  const release = keeper.hold(a!, h);
  await sleep(130);
  assert.equal(h.losses, 0);
  assert.equal(link.called('heartbeat').length, 2);
  assert.equal(link.members.get(a!.runId)!.beats.length, 1, 'the second beat landed');
  release();
});
