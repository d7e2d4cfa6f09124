/**
 * Taking a share of a batch (src/scheduler/batch-share.ts) against a fake
 * link: all of it when alone, a part when others can help (the rest given
 * back), what was claimed when sizing fails, nothing when the host's
 * webServer lock is held elsewhere or no slot is free.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { ClaimedRun } from '../../src/core/types.js';
import { holdShare, takeShare, wantedSlots, type HoldShareDeps } from '../../src/scheduler/batch-share.js';
import type { HeldLock } from '../../src/scheduler/host-lock.js';
import { FakeLink, commandSpec, playwrightCase } from '../helpers/fake-link.js';

const me = { id: 'w', host: 'h1' };
const logger = pino({ level: 'silent' });

async function batch(link: FakeLink, n: number, claim: number, expectedMs = 10_000): Promise<ClaimedRun[]> {
  link.add('s', Array.from({ length: n }, (_, i) => playwrightCase(`case ${i}`)), 'e2e', expectedMs);
  return link.claimRuns({ workerId: 'w', limit: claim, leaseMs: 10_000 });
}

const unlocked: HeldLock = { release: () => undefined };

/** `lock`: what the host's webServer gate answers (undefined: another batch here holds a port). */
function deps(link: FakeLink, lock: HeldLock | undefined = unlocked): HoldShareDeps {
  return {
    link, me, leaseMs: 10_000, logger, peers: (setId, key) => link.batchWorkers(setId, key),
    gate: { enter: () => Promise.resolve(lock) },
    giveBack: async (runs) => void (await link.releaseRuns(runs.map((r) => ({ runId: r.id, workerId: r.workerId, claim: r.claim })))),
  };
}

const ctx = (link: FakeLink) => ({ slots: 2, wanted: 2, maxShareMs: 30_000, limit: 256, me, peers: (s: string, k: string) => link.batchWorkers(s, k) });

test('alone: the whole batch, the rest of it claimed', async () => {
  const link = new FakeLink();
  link.workers = [{ id: 'w', host: 'h1', slots: 2, holding: 1, heldMs: 10_000 }];
  const claimed = await batch(link, 6, 1);
  const share = await takeShare(link, claimed, ctx(link), deps(link));
  assert.equal(share.length, 6);
  assert.equal(link.called('claimBatch').length, 1);
});

test('with another worker that can help: a part, what was claimed beyond it given back', async () => {
  const link = new FakeLink();
  link.workers = [
    { id: 'w', host: 'h1', slots: 2, holding: 6, heldMs: 60_000 },
    { id: 'other', host: 'h2', slots: 2, holding: 0, heldMs: 0 },
  ];
  const claimed = await batch(link, 6, 6);
  const share = await takeShare(link, claimed, ctx(link), deps(link));
  assert.ok(share.length >= 1 && share.length < 6, `a part: ${share.length}`);
  const back = link.called<{ runId: string }[]>('releaseRuns').flat().map((l) => l.runId);
  assert.equal(back.length, 6 - share.length, 'the rest goes back for the other worker');
});

/**
 * Six members of a suite with a fixed-port webServer: this worker (`w`) claimed two, a
 * neighbour on the same host (`nb`) two more; the registry counts what each holds.
 */
async function hostBoundBatch() {
  const link = new FakeLink();
  const port = playwrightCase('x').case!;
  link.add('s', Array.from({ length: 6 }, (_, i) => playwrightCase(`case ${i}`, { case: { ...port, titles: [`case ${i}`], webServerPorts: [4100] } })), 'e2e', 10_000);
  const claimed = await link.claimRuns({ workerId: 'w', limit: 2, leaseMs: 10_000 });
  const neighbour = await link.claimRuns({ workerId: 'nb', limit: 2, leaseMs: 10_000 });
  const holding = (id: string) => [...link.members.values()].filter((m) => m.workerId === id).length;
  Object.defineProperty(link, 'workers', { get: () => [me, { id: 'nb', host: 'h1' }].map((w) => ({ ...w, slots: 2, holding: holding(w.id), heldMs: holding(w.id) * 10_000 })) });
  return { link, claimed, neighbour, holding };
}

test('a fixed-port webServer batch: what a neighbour on this host held while the share was sized comes back to it, even when given back before the share is claimed', async () => {
  const { link, claimed, neighbour, holding } = await hostBoundBatch();
  // The neighbour finds the port held and gives its members back just after this worker sized its share.
  const peers = async (setId: string, key: string) => {
    const workers = await link.batchWorkers(setId, key);
    if (holding('nb') > 0) await link.releaseRuns(neighbour.map((r) => ({ runId: r.id, workerId: r.workerId, claim: r.claim })));
    return workers;
  };
  const share = await takeShare(link, claimed, { ...ctx(link), peers }, deps(link));
  assert.equal(share.length, 6, 'the whole batch in this one process: the neighbour cannot run any of it while this worker holds the port');
  assert.ok([...link.members.values()].every((m) => m.workerId === 'w'));
});

test('a fixed-port webServer batch: what a neighbour gave back between the share\'s claim and its first look at the host is claimed too', async () => {
  const { link, claimed, neighbour } = await hostBoundBatch();
  // Sizing sees the neighbour's two; by the first look after the claim they are back and held by no one.
  let looks = 0;
  const peers = async (setId: string, key: string) => {
    if (looks++ === 1) await link.releaseRuns(neighbour.map((r) => ({ runId: r.id, workerId: r.workerId, claim: r.claim })));
    return link.batchWorkers(setId, key);
  };
  const share = await takeShare(link, claimed, { ...ctx(link), peers }, deps(link));
  assert.equal(share.length, 6, 'no member is left for a second start of the suite on this host');
});

test('a fixed-port webServer batch: a neighbour\'s members given back between the two reads that size the share are not left out', async () => {
  const { link, claimed, neighbour } = await hostBoundBatch();
  // The waiting work is read while the neighbour holds its two, the registry just after it gave them
  // back: neither read counts them (the race behind a member run alone in a second start of the suite).
  let looks = 0;
  const peers = async (setId: string, key: string) => {
    if (looks++ === 0) await link.releaseRuns(neighbour.map((r) => ({ runId: r.id, workerId: r.workerId, claim: r.claim })));
    return link.batchWorkers(setId, key);
  };
  const share = await takeShare(link, claimed, { ...ctx(link), peers }, deps(link));
  assert.equal(share.length, 6, 'no member is left for a second start of the suite on this host');
});

test('sizing fails: it runs what it claimed', async () => {
  const link = new FakeLink();
  link.failures.waitingWork = [new Error('down')];
  const claimed = await batch(link, 6, 2);
  const share = await takeShare(link, claimed, ctx(link), deps(link));
  assert.deepEqual(share.map((r) => r.id), claimed.map((r) => r.id));
});

test('holdShare: the slots a suite asks for, at most those free', async () => {
  const link = new FakeLink();
  const claimed = await batch(link, 2, 2);
  claimed.forEach((r) => ((r.spec as { workers?: number }).workers = 3));
  const share = await holdShare(claimed, 2, deps(link));
  assert.equal(share?.slots, 2);
  assert.equal(share?.runs.length, 2);
  assert.equal(wantedSlots(commandSpec('t')), 1, 'anything but a Playwright suite: one');
});

test('holdShare: a webServer port held by another batch here, or no free slot: the members go back', async () => {
  for (const [free, gate] of [[2, 'held elsewhere'], [0, 'free']] as const) {
    const link = new FakeLink();
    const claimed = await batch(link, 2, 2);
    const d = { ...deps(link), gate: { enter: () => Promise.resolve(gate === 'free' ? unlocked : undefined) } };
    assert.equal(await holdShare(claimed, free, d), undefined);
    assert.equal(link.called<unknown[]>('releaseRuns').flat().length, 2);
    assert.ok([...link.members.values()].every((m) => m.workerId === null));
  }
});
