/**
 * Store contract for batched members (Playwright cases) and artifacts: reserved
 * claims that stay WAITING until they begin, the rest of a batch, fenced starts
 * and ends, release and reaping of reserved members, artifact metadata recorded
 * with an outcome and swept by age. Run by runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Store } from '../../src/store/store.js';
import { leaseOf, WORKER_LOST } from '../../src/store/store.js';
import type { NewArtifact, NewTestRunSet, PlaywrightTestSpec, RunOutcome, TestSpec } from '../../src/core/types.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

export function caseSpec(title: string, entry = 'e2e', project = ''): PlaywrightTestSpec {
  return {
    name: `a.spec.ts › ${title}`, type: 'playwright', dir: '/suite', config: '/suite/playwright.config.ts', tags: [],
    timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false,
    case: { entry, project, browser: 'chromium', file: 'a.spec.ts', line: 1, titles: [title] },
  };
}

/** A set of `cases` Playwright cases (one batch key), then `commands` command members. */
function mixedSet(newSet: NewSet, cases: number, commands = 0, entry = 'e2e'): NewTestRunSet {
  const set = newSet(cases + commands);
  set.runs.forEach((run, i) => {
    if (i < cases) run.spec = caseSpec(`case ${i}`, entry);
  });
  return set;
}

const artifact = (name: string): NewArtifact => ({ id: randomUUID(), name, contentType: 'image/png', size: 42, location: `file:xx/${name}` });
const failed = { status: 'FAIL' as const, attempts: 1, error: 'boom', output: '', durationMs: 3 };
const passed = { status: 'SUCCESS' as const, attempts: 2, error: null, output: '', durationMs: 4 };

export function runBatchContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: batches and artifacts`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('batched members are claimed reserved: leased, still WAITING, the set still WAITING', async () => {
      const set = mixedSet(newSet, 3, 1);
      await store.sets.create(set);
      const claimed = await store.claims.claimRuns({ workerId: 'w', limit: 2, leaseMs: 10_000 });
      assert.equal(claimed.length, 2);
      assert.ok(claimed.every((c) => c.batchKey !== null && c.batchKey === claimed[0]!.batchKey));
      const s = await store.sets.get(set.id);
      assert.equal(s?.status, 'WAITING');
      assert.deepEqual(s?.counts, { WAITING: 4, RUNNING: 0, SUCCESS: 0, FAIL: 0 });
      assert.ok((await store.sets.listRuns(set.id)).every((r) => r.status === 'WAITING' && r.startedAt === null));

      const rest = await store.claims.claimBatch({ workerId: 'w', setId: set.id, batchKey: claimed[0]!.batchKey!, limit: 10, leaseMs: 10_000 });
      assert.deepEqual(rest.map((r) => r.spec.name), ['a.spec.ts › case 2'], 'only the rest of the batch, not the command');
      assert.deepEqual(rest[0]!.variables, set.variables);
      const [command] = await store.claims.claimRuns({ workerId: 'w2', limit: 5, leaseMs: 10_000 });
      assert.equal(command?.batchKey, null, 'reserved members are not claimed again; the command is');
      assert.equal((await store.sets.get(set.id))?.counts.RUNNING, 1);
    });

    test('a reserved member names its holder (heldBy) while WAITING; an unclaimed one and a started one do not', async () => {
      const set = mixedSet(newSet, 3);
      await store.sets.create(set);
      const [head] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      const seen = async () => (await store.sets.listRuns(set.id)).map((r) => [r.id === head!.id ? 'head' : 'other', r.status, r.heldBy, r.workerId]).sort();
      assert.deepEqual(await seen(), [['head', 'WAITING', 'w', null], ['other', 'WAITING', null, null], ['other', 'WAITING', null, null]], 'held by w, not yet begun; the others wait for a slot');
      assert.ok(await store.claims.startRun(leaseOf(head!)));
      assert.deepEqual((await seen())[0], ['head', 'RUNNING', null, 'w'], 'once begun: workerId says who runs it');
      assert.equal(await store.claims.releaseRuns([leaseOf(head!)]), 1);
      assert.deepEqual((await seen())[0]?.slice(0, 3), ['head', 'WAITING', null], 'given back: nobody holds it');
    });

    test('a batch claim takes one set and one batch key, oldest first, never a member twice', async () => {
      const first = mixedSet(newSet, 4, 0, 'e2e');
      const other = mixedSet(newSet, 2, 0, 'other');
      await store.sets.create(first);
      await store.sets.create(other);
      const [head] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      const key = head!.batchKey!;
      const batches = await Promise.all(
        ['a', 'b', 'c'].map((w) => store.claims.claimBatch({ workerId: w, setId: first.id, batchKey: key, limit: 2, leaseMs: 10_000 })),
      );
      const ids = [head!.id, ...batches.flat().map((c) => c.id)];
      assert.equal(new Set(ids).size, 4, 'each member once');
      assert.deepEqual(new Set(ids), new Set(first.runs.map((r) => r.id)));
      assert.deepEqual(await store.claims.claimBatch({ workerId: 'w', setId: other.id, batchKey: key, limit: 5, leaseMs: 1000 }), [], 'another key');
      assert.deepEqual(await store.claims.claimBatch({ workerId: 'w', setId: first.id, batchKey: key, limit: 0, leaseMs: 1000 }), []);
    });

    test('startRun moves a reserved member to RUNNING, fenced and once; the set starts with it', async () => {
      const set = mixedSet(newSet, 2);
      await store.sets.create(set);
      const [a, b] = await store.claims.claimRuns({ workerId: 'w', limit: 2, leaseMs: 10_000 });
      assert.equal(await store.claims.startRun({ ...leaseOf(a!), workerId: 'other' }), false);
      assert.equal(await store.claims.startRun({ ...leaseOf(a!), claim: a!.claim + 1 }), false);
      assert.equal(await store.claims.startRun(leaseOf(a!)), true);
      assert.equal(await store.claims.startRun(leaseOf(a!)), false, 'not twice');
      const s = await store.sets.get(set.id);
      assert.equal(s?.status, 'RUNNING');
      assert.ok(s?.startedAt);
      assert.deepEqual(s?.counts, { WAITING: 1, RUNNING: 1, SUCCESS: 0, FAIL: 0 });
      assert.ok(await store.claims.heartbeat(leaseOf(b!), 10_000, 1), 'a reserved lease heartbeats like a running one');
      const runs = await store.sets.listRuns(set.id);
      assert.ok(runs.find((r) => r.id === a!.id)?.startedAt);
      assert.equal(runs.find((r) => r.id === b!.id)?.startedAt, null);
    });

    test('startRun back-dated: a member that ended before it began starts when its worker took it, with that worker', async () => {
      const set = mixedSet(newSet, 1);
      await store.sets.create(set);
      const [a] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      assert.equal(await store.claims.startRun(leaseOf(a!), 1500), true);
      assert.ok(await store.claims.finishRun(leaseOf(a!), { status: 'FAIL', attempts: 0, error: 'Chromium not found', output: '', durationMs: 0 }));
      const [run] = await store.sets.listRuns(set.id);
      assert.equal(run?.workerId, 'w');
      const took = Date.parse(run.endedAt!) - Date.parse(run.startedAt!);
      assert.ok(took >= 1400 && took < 5000, `started about 1.5 s before its end, not at it: ${took} ms`);
      const s = await store.sets.get(set.id);
      assert.equal(Date.parse(s!.startedAt!), Date.parse(run.startedAt!), 'the set started with it');
    });

    test('outcomes end started members and record their artifacts with them; a reserved one may only FAIL', async () => {
      const set = mixedSet(newSet, 3);
      await store.sets.create(set);
      const [a, b, c] = await store.claims.claimRuns({ workerId: 'w', limit: 3, leaseMs: 10_000 });
      await store.claims.startRun(leaseOf(a!));
      const shots = [artifact('screenshot.png'), artifact('trace.zip')];
      assert.ok(await store.claims.finishRun(leaseOf(a!), { ...failed, artifacts: shots }));
      assert.equal(await store.claims.finishRun({ ...leaseOf(b!), workerId: 'x' }, { ...failed, artifacts: [artifact('nope.png')] }), false);
      await assert.rejects(store.claims.finishRun(leaseOf(b!), passed), 'a member that never began cannot pass');
      const more = newSet(1);
      await store.sets.create(more);
      await assert.rejects(
        store.claims.finishAndClaim(leaseOf(b!), passed, { workerId: 'w', limit: 1, leaseMs: 10_000 }),
        'nor pass on the way to the next member',
      );
      assert.equal((await store.sets.get(more.id))?.status, 'WAITING', 'and the refused step claimed nothing');
      assert.equal((await store.sets.listRuns(more.id))[0]?.status, 'WAITING');
      assert.ok(await store.claims.finishRun(leaseOf(b!), failed), 'it can fail: WAITING → FAIL');
      await store.claims.startRun(leaseOf(c!));
      assert.ok(await store.claims.finishRun(leaseOf(c!), passed));
      const s = await store.sets.get(set.id);
      assert.equal(s?.status, 'FAIL');
      assert.deepEqual(s?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 2 });
      const listed = await store.artifacts.list(set.id);
      assert.deepEqual(listed.map((x) => x.name).sort(), ['screenshot.png', 'trace.zip']);
      assert.ok(listed.every((x) => x.runId === a!.id && x.setId === set.id && x.size === 42 && x.contentType === 'image/png'));
      const one = await store.artifacts.get(shots[0]!.id);
      assert.equal(one?.location, shots[0]!.location);
      assert.match(one.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.equal(await store.artifacts.get(randomUUID()), undefined);
      assert.deepEqual(await store.artifacts.list(randomUUID()), []);
    });

    test('finishAndClaim records the outcome\'s artifacts with it', async () => {
      const set = newSet(2);
      await store.sets.create(set);
      const [a] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      const shot = artifact('screenshot.png');
      const step = await store.claims.finishAndClaim(leaseOf(a!), { ...failed, artifacts: [shot] }, { workerId: 'w', limit: 1, leaseMs: 10_000 });
      assert.equal(step.finished, true);
      assert.equal(step.claimed.length, 1);
      const listed = await store.artifacts.list(set.id);
      assert.deepEqual(listed.map((x) => [x.id, x.runId, x.name]), [[shot.id, a!.id, 'screenshot.png']]);
    });

    test('releasing a batch gives reserved and running members back, counting only the running ones', async () => {
      const set = mixedSet(newSet, 3);
      await store.sets.create(set);
      const claimed = await store.claims.claimRuns({ workerId: 'w', limit: 3, leaseMs: 60_000 });
      await store.claims.startRun(leaseOf(claimed[0]!));
      assert.equal(await store.claims.releaseRuns(claimed.map(leaseOf)), 3);
      const s = await store.sets.get(set.id);
      assert.deepEqual(s?.counts, { WAITING: 3, RUNNING: 0, SUCCESS: 0, FAIL: 0 });
      assert.equal(s?.status, 'RUNNING', 'a set that started never moves back');
      assert.equal(await store.claims.heartbeat(leaseOf(claimed[1]!), 1000, 1), false, 'the lease is gone');
      assert.equal((await store.claims.claimRuns({ workerId: 'w2', limit: 5, leaseMs: 1000 })).length, 3, 'claimable again');
    });

    test('a lost worker\'s reserved members go back to the queue, then FAIL once out of leases', async () => {
      const set = mixedSet(newSet, 2);
      await store.sets.create(set);
      const [a, b] = await store.claims.claimRuns({ workerId: 'w1', limit: 2, leaseMs: 1 });
      await store.claims.startRun(leaseOf(a!));
      await sleep(20);
      assert.deepEqual(await store.claims.reapExpired(2), { requeued: 2, failed: 0 });
      let s = await store.sets.get(set.id);
      assert.deepEqual(s?.counts, { WAITING: 2, RUNNING: 0, SUCCESS: 0, FAIL: 0 });
      assert.equal(await store.claims.startRun(leaseOf(b!)), false, 'the old lease is fenced off');
      await store.claims.claimRuns({ workerId: 'w2', limit: 2, leaseMs: 1 });
      await sleep(20);
      assert.deepEqual(await store.claims.reapExpired(2), { requeued: 0, failed: 2 });
      s = await store.sets.get(set.id);
      assert.equal(s?.status, 'FAIL');
      assert.deepEqual(s?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 2 });
      assert.ok((await store.sets.listRuns(set.id)).every((r) => r.error === WORKER_LOST));
    });

    test('old artifacts are deleted oldest first, a page at a time, and returned for their bytes', async () => {
      const set = mixedSet(newSet, 1);
      await store.sets.create(set);
      const [a] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      const files = [artifact('one.png'), artifact('two.png'), artifact('three.png')];
      await store.claims.finishRun(leaseOf(a!), { ...failed, artifacts: files });
      assert.deepEqual(await store.artifacts.deleteBefore(new Date(Date.now() - 60_000).toISOString(), 10), [], 'none that old');
      const later = new Date(Date.now() + 60_000).toISOString();
      const page = await store.artifacts.deleteBefore(later, 2);
      assert.equal(page.length, 2);
      const rest = await store.artifacts.deleteBefore(later, 2);
      assert.equal(rest.length, 1);
      assert.deepEqual(new Set([...page, ...rest].map((x) => x.location)), new Set(files.map((f) => f.location)));
      assert.deepEqual(await store.artifacts.list(set.id), []);
    });

    test('a case Playwright skipped keeps its mark with its outcome; any other member, and a FAIL sent marked, reads unmarked', async () => {
      const set = mixedSet(newSet, 4, 1);
      await store.sets.create(set);
      const claimed = await store.claims.claimRuns({ workerId: 'w', limit: 5, leaseMs: 10_000 });
      const byName = new Map(claimed.map((c) => [c.spec.name, c]));
      const finish = async (memberName: string, outcome: RunOutcome, via: 'finishRun' | 'finishAndClaim' = 'finishRun') => {
        const claim = byName.get(memberName)!;
        const lease = leaseOf(claim);
        if (claim.batchKey !== null) assert.ok(await store.claims.startRun(lease), 'a reserved case begins before it ends');
        if (via === 'finishRun') assert.ok(await store.claims.finishRun(lease, outcome));
        else assert.ok((await store.claims.finishAndClaim(lease, outcome, { workerId: 'w', limit: 0, leaseMs: 10_000 })).finished);
      };
      await finish('a.spec.ts › case 0', { ...passed, attempts: 1, skipped: true });
      await finish('a.spec.ts › case 1', { ...passed, attempts: 1, skipped: true }, 'finishAndClaim');
      await finish('a.spec.ts › case 2', passed);
      await finish('a.spec.ts › case 3', { ...failed, skipped: true });
      await finish(set.runs[4]!.spec.name, { ...passed, skipped: false });
      const runs = await store.sets.listRuns(set.id);
      assert.deepEqual(runs.map((r) => [r.status, r.skipped]), [['SUCCESS', true], ['SUCCESS', true], ['SUCCESS', false], ['FAIL', false], ['SUCCESS', false]]);
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 4, FAIL: 1 }, 'a skipped case counts as the SUCCESS it is');
    });

    test('specs of every type come back exactly as stored', async () => {
      const set = newSet(1);
      const spec: TestSpec = { ...caseSpec('exact'), grep: '@smoke', project: 'chromium', workers: 3 };
      set.runs[0]!.spec = spec;
      await store.sets.create(set);
      const [claimed] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 1000 });
      assert.equal(JSON.stringify(claimed!.spec), JSON.stringify(spec));
      assert.equal((await store.sets.listRuns(set.id))[0]?.type, 'playwright');
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
