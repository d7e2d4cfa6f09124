import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchShare as share, DEFAULT_MAX_SHARE_MS, MIN_SHARE_MS_PER_SLOT, heldOnHost, sharePeers, type ShareRequest } from '../../src/scheduler/shares.js';
import { claimOrder, DEFAULT_EXPECTED_MS, expectedDurations, median } from '../../src/core/expected.js';

const batchShare = (req: Omit<ShareRequest, 'maxShareMs'> & { maxShareMs?: number }) => share({ maxShareMs: DEFAULT_MAX_SHARE_MS, ...req });
import type { TestSpec } from '../../src/core/types.js';
import { caseSpec } from '../store/batch-contract.js';

const command = (name: string): TestSpec => ({ name, type: 'command', run: ['true'], cwd: '/', tags: [], timeoutSeconds: 5, retries: 0 });

test('median: the middle sample, or the mean of the two middle ones; none without samples', () => {
  assert.equal(median([]), undefined);
  assert.equal(median([5]), 5);
  assert.equal(median([9, 1, 5]), 5);
  assert.equal(median([4, 1, 3, 2]), 3, '2.5 rounds to whole milliseconds');
  assert.equal(median([100, 100, 100, 100, 100, 100, 100, 100, 100, 90_000]), 100, 'one slow outlier does not move it');
});

test('expected duration: own history first, else the median of its entry, else of the set, else the default', () => {
  const a1 = caseSpec('a1', 'suite-a');
  const a2 = caseSpec('a2', 'suite-a');
  const aNew = caseSpec('a-new', 'suite-a');
  const bNew = caseSpec('b-new', 'suite-b');
  const cmd = command('contract');
  const history = new Map([
    [a1.name, [1000, 3000, 2000]],
    [a2.name, [4000]],
    [cmd.name, [100, 200, 300]],
  ]);
  const expected = expectedDurations([a1, a2, aNew, bNew, cmd], history);
  assert.deepEqual(expected, [2000, 4000, 3000, 2000, 200]);
  // a1 2000, a2 4000 → entry suite-a median 3000; suite-b has none → the set's median of 2000, 4000, 200 = 2000.

  assert.deepEqual(expectedDurations([command('x'), caseSpec('y')], new Map()), [DEFAULT_EXPECTED_MS, DEFAULT_EXPECTED_MS], 'a first run: all alike');
});

test('claim order: longest expected first, equal ones in config order', () => {
  assert.deepEqual(claimOrder([1000, 10_000, 1000, 10_000, 500]), [1, 3, 0, 2, 4]);
  assert.deepEqual(claimOrder([]), []);
});

const alone = { slots: 0, heldMs: 0 };

test('a worker no other worker can help takes the whole batch (one Playwright process): no least, no most', () => {
  const long = Array.from({ length: 200 }, () => 1000);
  assert.equal(batchShare({ waiting: long, slots: 2, peers: alone }), 200, '200 s: far past --max-share, still one process');
  assert.equal(batchShare({ waiting: long, slots: 1, peers: alone, maxShareMs: 2000 }), 200, 'a smaller --max-share does not cut it either');
  assert.equal(batchShare({ waiting: [], slots: 2, peers: alone }), 0);
});

test('with helpers, each worker takes its slots\' part of the outstanding work, whether they claim one after another or at once', () => {
  // The fan-out bench: 4 cases of 10 s and 28 of 1 s (longest first), 4 workers of 2 slots.
  const suite = [...Array.from({ length: 4 }, () => 10_000), ...Array.from({ length: 28 }, () => 1000)];
  const first = batchShare({ waiting: suite, slots: 2, peers: { slots: 6, heldMs: 0 } });
  assert.equal(first, 2, 'two 10 s cases, one a slot: 20 s is past its 17 s part');
  // The next ones see what the earlier ones hold: still a quarter of the whole each.
  assert.equal(batchShare({ waiting: suite.slice(2), slots: 2, peers: { slots: 6, heldMs: 20_000 } }), 2);
  assert.equal(batchShare({ waiting: suite.slice(4), slots: 2, peers: { slots: 6, heldMs: 40_000 } }), 17, 'a quarter of 68 s');
  assert.equal(batchShare({ waiting: suite.slice(21), slots: 2, peers: { slots: 6, heldMs: 57_000 } }), 11, 'the last one takes what is left');

  // All four claim two cases at the same moment (4 × 1 s each held): each still takes a quarter, not all.
  const even = Array.from({ length: 32 }, () => 1000);
  assert.equal(batchShare({ waiting: even.slice(0, 26), slots: 2, peers: { slots: 6, heldMs: 6000 } }), 10, 'a quarter (8 s) is under 5 s a slot: 10');
  let waiting = Array.from({ length: 400 }, () => 1000);
  const shares: number[] = [];
  for (let held = 0; held < 400; held += shares.at(-1)!) {
    const n = batchShare({ waiting, slots: 1, peers: { slots: 3, heldMs: held * 1000 }, maxShareMs: 3_600_000 });
    shares.push(n);
    waiting = waiting.slice(n);
  }
  assert.deepEqual(shares, [100, 100, 100, 100], 'four workers, one start each, equal parts');
});

test('with helpers, a share holds at least one member and MIN_SHARE_MS_PER_SLOT a slot, at most --max-share a slot', () => {
  const long = Array.from({ length: 400 }, () => 1000);
  assert.equal(batchShare({ waiting: long, slots: 2, peers: { slots: 2, heldMs: 0 } }), 60, 'half is 200 s; capped at 30 s a slot');
  assert.equal(batchShare({ waiting: long, slots: 2, peers: { slots: 2, heldMs: 0 }, maxShareMs: 2000 }), 4, 'a smaller --max-share wins over the least share');
  const quick = Array.from({ length: 40 }, () => 500);
  assert.equal(batchShare({ waiting: quick, slots: 1, peers: { slots: 7, heldMs: 0 } }), MIN_SHARE_MS_PER_SLOT / 500, 'an eighth is 2.5 s: at least 5 s, a process is worth starting');
  assert.equal(batchShare({ waiting: [600_000, 600_000, 600_000], slots: 1, peers: { slots: 7, heldMs: 0 } }), 1, 'one case longer than its part: still one a slot');
  assert.equal(batchShare({ waiting: [600_000, 600_000, 600_000], slots: 2, peers: { slots: 7, heldMs: 0 } }), 2);
});

test('peers: other workers able to run part of a batch, by the slots one process of it uses, and what they hold', () => {
  const workers = [
    { id: 'me', host: 'a', slots: 4, holding: 3, heldMs: 3000 },
    { id: 'a2', host: 'a', slots: 2, holding: 1, heldMs: 700 },
    { id: 'b1', host: 'b', slots: 8, holding: 0, heldMs: 0 },
    { id: 'b2', host: 'b', slots: 1, holding: 5, heldMs: 5000 },
    { id: 'c1', host: 'c', slots: 1, holding: 0, heldMs: 0 },
  ];
  const me = { id: 'me', host: 'a' };
  assert.deepEqual(sharePeers({ workers, me, wanted: 2, hostBound: false }), { slots: 2 + 2 + 1 + 1, heldMs: 5700 }, 'each gives at most 2 slots');
  // A webServer on a fixed port: one process per host, not this host (a2's member comes back to this worker).
  assert.deepEqual(sharePeers({ workers, me, wanted: 2, hostBound: true }), { slots: 2 + 1, heldMs: 5000 });
  assert.deepEqual(sharePeers({ workers: workers.slice(0, 2), me, wanted: 2, hostBound: true }), alone, 'two workers of one host: alone');
  assert.deepEqual(sharePeers({ workers: [], me, wanted: 2, hostBound: false }), alone, 'no registry: alone');
  assert.equal(heldOnHost(workers, me), 1, 'a2, on this host, holds one');
  assert.equal(heldOnHost(workers, { id: 'b1', host: 'b' }), 5);
});
