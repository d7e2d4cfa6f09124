import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchShare as share, claimOrder, DEFAULT_EXPECTED_MS, DEFAULT_MAX_SHARE_MS, expectedDurations, median, MIN_SHARE_MS_PER_SLOT, type ShareRequest } from '../../src/scheduler/shares.js';

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

test('a worker alone takes the whole batch (one Playwright process), up to the most a share holds', () => {
  const waiting = Array.from({ length: 40 }, () => 1000);
  assert.equal(batchShare({ waiting, slots: 2, liveSlots: 2 }), 40);
  assert.equal(batchShare({ waiting, slots: 2, liveSlots: 1 }), 40, 'live slots never below its own');
  const long = Array.from({ length: 200 }, () => 1000);
  assert.equal(batchShare({ waiting: long, slots: 2, liveSlots: 2 }), 60, '30 s a slot: a worker that joins later finds work');
  assert.equal(batchShare({ waiting: long, slots: 2, liveSlots: 2, maxShareMs: 2000 }), 4, 'a smaller --max-share wins over the least share');
});

test('shares are cut by expected time, not count, so every live worker gets part of the suite', () => {
  // The fan-out bench: 4 cases of 10 s and 28 of 1 s (longest first), 4 workers of 2 slots.
  const suite = [...Array.from({ length: 4 }, () => 10_000), ...Array.from({ length: 28 }, () => 1000)];
  const first = batchShare({ waiting: suite, slots: 2, liveSlots: 8 });
  assert.equal(first, 2, 'two 10 s cases, one a slot: 20 s is past its 17 s part');
  const second = batchShare({ waiting: suite.slice(first), slots: 2, liveSlots: 8 });
  assert.equal(second, 2);
  const third = batchShare({ waiting: suite.slice(4), slots: 2, liveSlots: 8 });
  assert.equal(third, 10, 'the 1 s cases: at least MIN_SHARE_MS_PER_SLOT a slot, so a process is worth starting');
  const fourth = batchShare({ waiting: suite.slice(14), slots: 2, liveSlots: 8 });
  assert.equal(fourth, 10);
  assert.equal(batchShare({ waiting: suite.slice(24), slots: 2, liveSlots: 8 }), 8, 'what is left');
});

test('shares shrink as a big batch drains, and never fall below one member a slot', () => {
  let waiting = Array.from({ length: 400 }, () => 1000);
  const shares: number[] = [];
  while (waiting.length > 0) {
    const n = batchShare({ waiting, slots: 2, liveSlots: 8 });
    assert.ok(n >= Math.min(2, waiting.length));
    shares.push(n);
    waiting = waiting.slice(n);
  }
  assert.equal(shares[0], 60, 'a quarter of the work (100 s) for a quarter of the slots, capped at 30 s a slot');
  assert.equal(batchShare({ waiting: Array.from({ length: 400 }, () => 1000), slots: 2, liveSlots: 8, maxShareMs: 3_600_000 }), 100, 'uncapped: a quarter');
  assert.ok(shares.every((n, i) => i === 0 || n <= (shares[i - 1] as number)), `non-increasing: ${shares.join(',')}`);
  assert.equal(shares.reduce((a, b) => a + b, 0), 400, 'every member in exactly one share');
  assert.ok((shares.at(-1) as number) <= (MIN_SHARE_MS_PER_SLOT * 2) / 1000, `the last share is small: ${shares.at(-1)}`);
  // A slot with a single case longer than its whole part still takes one per slot.
  assert.equal(batchShare({ waiting: [600_000, 600_000, 600_000], slots: 1, liveSlots: 8 }), 1);
});
