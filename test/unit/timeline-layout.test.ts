/** The set page's timeline as data: lanes per worker by interval packing, the span, and the axis ticks. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layoutTimeline, timeTicks, type TimelineMember } from '../../src/dashboard/timeline-layout.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const member = (id: string, workerId: string | null, start: number | null, end: number | null, status = 'SUCCESS'): TimelineMember => ({
  id,
  name: `test ${id}`,
  status,
  workerId,
  startedAt: start === null ? null : at(start),
  endedAt: end === null ? null : at(end),
});

test('overlapping members of one worker get one lane each; a lane is reused once free', () => {
  const layout = layoutTimeline(
    [member('a', 'w1', 0, 10), member('b', 'w1', 1, 3), member('c', 'w1', 3, 5), member('d', 'w1', 4, 6), member('e', 'w1', 10, 11)],
    T0 + 60_000,
  );
  assert.deepEqual(
    layout.lanes.map((l) => [l.worker, l.slot, l.bars.map((b) => b.member.id)]),
    [
      ['w1', 0, ['a', 'e']],
      ['w1', 1, ['b', 'c']],
      ['w1', 2, ['d']],
    ],
  );
  assert.equal(layout.origin, T0);
  assert.equal(layout.span, 11_000);
  assert.deepEqual(layout.lanes[0]!.bars.map((b) => [b.from, b.to]), [[0, 10_000], [10_000, 11_000]]);
});

test('workers in order of their first start, unknown worker last; waiting members are counted, not drawn', () => {
  const layout = layoutTimeline(
    [member('late', 'w2', 5, 6), member('old', null, 0, 1), member('first', 'w1', 1, 2), member('waiting', null, null, null, 'WAITING')],
    T0 + 60_000,
  );
  assert.deepEqual(layout.lanes.map((l) => l.worker), ['w1', 'w2', null]);
  assert.equal(layout.notStarted, 1);
  assert.equal(layout.span, 6_000);
});

test('a running member reaches now, marked open', () => {
  const layout = layoutTimeline([member('r', 'w1', 0, null, 'RUNNING')], T0 + 2_500);
  assert.deepEqual(layout.lanes[0]!.bars.map((b) => [b.to, b.open]), [[2_500, true]]);
  assert.equal(layout.span, 2_500);
});

test('nothing started: no lanes, no span', () => {
  const layout = layoutTimeline([member('w', null, null, null, 'WAITING')], T0);
  assert.deepEqual(layout, { lanes: [], origin: T0, span: 0, notStarted: 1 });
});

test('500 members over 8 slots stay in 8 lanes', () => {
  const members = Array.from({ length: 500 }, (_, i) => member(String(i), `w${i % 4}`, Math.floor(i / 8), Math.floor(i / 8) + 1));
  const layout = layoutTimeline(members, T0);
  assert.equal(layout.lanes.length, 8);
  assert.equal(layout.lanes.reduce((n, l) => n + l.bars.length, 0), 500);
});

test('ticks: a round step, at most 8 intervals, from 0 to the span', () => {
  assert.deepEqual(timeTicks(0), [0]);
  assert.deepEqual(timeTicks(11_000), [0, 2000, 4000, 6000, 8000, 10_000]);
  assert.deepEqual(timeTicks(68_000), [0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000]);
  assert.deepEqual(timeTicks(7), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.ok(timeTicks(3_600_000).length <= 9);
});
