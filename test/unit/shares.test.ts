import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchShare as share, claimOrder, DEFAULT_EXPECTED_MS, DEFAULT_MAX_SHARE_MS, expectedDurations, median, MIN_SHARE_MS_PER_SLOT, heldOnHost, sharePeers, type ShareRequest } from '../../src/scheduler/shares.js';

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

const alone = { capable: 0, idle: 0 };

test('a worker no other worker can help takes the whole batch (one Playwright process): no least, no most', () => {
  const long = Array.from({ length: 200 }, () => 1000);
  assert.equal(batchShare({ waiting: long, slots: 2, peers: alone }), 200, '200 s: far past --max-share, still one process');
  assert.equal(batchShare({ waiting: long, slots: 1, peers: alone, maxShareMs: 2000 }), 200, 'a smaller --max-share does not cut it either');
  assert.equal(batchShare({ waiting: [], slots: 2, peers: alone }), 0);
});

test('with helpers, a batch is split evenly among the workers that take a share one after another', () => {
  // The fan-out bench: 4 cases of 10 s and 28 of 1 s (longest first), 4 workers of 2 slots.
  const suite = [...Array.from({ length: 4 }, () => 10_000), ...Array.from({ length: 28 }, () => 1000)];
  const first = batchShare({ waiting: suite, slots: 2, peers: { capable: 6, idle: 6 } });
  assert.equal(first, 2, 'two 10 s cases, one a slot: 20 s is past its 17 s part');
  // The next one sees the first holding a share: its part is the rest among itself and the two left.
  const second = batchShare({ waiting: suite.slice(2), slots: 2, peers: { capable: 6, idle: 4 } });
  assert.equal(second, 2);
  const third = batchShare({ waiting: suite.slice(4), slots: 2, peers: { capable: 6, idle: 2 } });
  assert.equal(third, 14, 'half of the 28 s of 1 s cases');
  assert.equal(batchShare({ waiting: suite.slice(18), slots: 2, peers: { capable: 6, idle: 0 } }), 14, 'the last one takes what is left');

  let waiting = Array.from({ length: 400 }, () => 1000);
  const shares: number[] = [];
  for (let idle = 3; idle >= 0; idle--) {
    const n = batchShare({ waiting, slots: 1, peers: { capable: 3, idle }, maxShareMs: 3_600_000 });
    shares.push(n);
    waiting = waiting.slice(n);
  }
  assert.deepEqual(shares, [100, 100, 100, 100], 'four workers, one start each, equal parts');
});

test('with helpers, a share holds at least one member and MIN_SHARE_MS_PER_SLOT a slot, at most --max-share a slot', () => {
  const long = Array.from({ length: 400 }, () => 1000);
  assert.equal(batchShare({ waiting: long, slots: 2, peers: { capable: 2, idle: 2 } }), 60, 'half is 200 s; capped at 30 s a slot');
  assert.equal(batchShare({ waiting: long, slots: 2, peers: { capable: 2, idle: 0 } }), 60, 'the others hold shares and come back for more: capped too');
  assert.equal(batchShare({ waiting: long, slots: 2, peers: { capable: 2, idle: 2 }, maxShareMs: 2000 }), 4, 'a smaller --max-share wins over the least share');
  const quick = Array.from({ length: 40 }, () => 500);
  assert.equal(batchShare({ waiting: quick, slots: 1, peers: { capable: 7, idle: 7 } }), MIN_SHARE_MS_PER_SLOT / 500, 'an eighth is 2.5 s: at least 5 s, a process is worth starting');
  assert.equal(batchShare({ waiting: [600_000, 600_000, 600_000], slots: 1, peers: { capable: 7, idle: 7 } }), 1, 'one case longer than its part: still one a slot');
  assert.equal(batchShare({ waiting: [600_000, 600_000, 600_000], slots: 2, peers: { capable: 7, idle: 7 } }), 2);
});

test('peers: other workers able to run part of a batch now, by the slots one process of it uses', () => {
  const workers = [
    { id: 'me', host: 'a', slots: 4, holding: 3 },
    { id: 'a2', host: 'a', slots: 2, holding: 0 },
    { id: 'b1', host: 'b', slots: 8, holding: 0 },
    { id: 'b2', host: 'b', slots: 1, holding: 5 },
    { id: 'c1', host: 'c', slots: 1, holding: 0 },
  ];
  const me = { id: 'me', host: 'a' };
  assert.deepEqual(sharePeers({ workers, me, wanted: 2, hostBound: false }), { capable: 2 + 2 + 1 + 1, idle: 2 + 2 + 1 }, 'each gives at most 2 slots; b2 holds a share already');
  // A webServer on a fixed port: one process per host; not this host; not a host where a share already runs.
  assert.deepEqual(sharePeers({ workers, me, wanted: 2, hostBound: true }), { capable: 2 + 1, idle: 1 });
  assert.deepEqual(sharePeers({ workers: workers.slice(0, 2), me, wanted: 2, hostBound: true }), alone, 'two workers of one host: alone');
  assert.deepEqual(sharePeers({ workers: [], me, wanted: 2, hostBound: false }), alone, 'no registry: alone');
  assert.equal(heldOnHost(workers, me), 0, 'a2, on this host, holds none of it');
  assert.equal(heldOnHost(workers, { id: 'b1', host: 'b' }), 5);
});
