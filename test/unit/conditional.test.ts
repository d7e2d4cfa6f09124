import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_WAIT_SECONDS, noneMatchHits, preferredWait, statusEtag } from '../../src/api/conditional.js';

const counts = { WAITING: 1, RUNNING: 2, SUCCESS: 3, FAIL: 0 };

test('the status tag changes with the status and with every count, and is a quoted strong tag', () => {
  const tag = statusEtag({ status: 'RUNNING', counts });
  assert.match(tag, /^"[^"]+"$/);
  assert.equal(statusEtag({ status: 'RUNNING', counts: { ...counts } }), tag);
  assert.notEqual(statusEtag({ status: 'FAIL', counts }), tag);
  for (const state of ['WAITING', 'RUNNING', 'SUCCESS', 'FAIL'] as const) {
    assert.notEqual(statusEtag({ status: 'RUNNING', counts: { ...counts, [state]: counts[state] + 1 } }), tag, state);
  }
  // Counts that only trade places still differ.
  assert.notEqual(statusEtag({ status: 'RUNNING', counts: { ...counts, WAITING: 2, RUNNING: 1 } }), tag);
});

test('If-None-Match: a list, weak tags and * match; another tag does not', () => {
  const tag = '"RUNNING.1.2.3.0"';
  assert.equal(noneMatchHits(tag, tag), true);
  assert.equal(noneMatchHits(`"x", ${tag}`, tag), true);
  assert.equal(noneMatchHits(`W/${tag}`, tag), true);
  assert.equal(noneMatchHits('*', tag), true);
  assert.equal(noneMatchHits('"RUNNING.1.2.3.1"', tag), false);
  assert.equal(noneMatchHits('RUNNING.1.2.3.0', tag), false, 'an unquoted tag is not the tag');
  assert.equal(noneMatchHits('', tag), false);
});

test('Prefer: wait=N among other preferences, capped at 60; anything else is ignored', () => {
  const cases: Array<[string | string[] | undefined, number]> = [
    [undefined, 0],
    ['wait=10', 10],
    ['respond-async, wait=5', 5],
    ['WAIT = 7', 7],
    ['wait="3"', 3],
    ['wait=10; foo=bar', 10],
    [['return=minimal', 'wait=4'], 4],
    ['wait=600', MAX_WAIT_SECONDS],
    ['wait=0', 0],
    ['wait=-1', 0],
    ['wait=soon', 0],
    ['wait=1.5', 0],
    ['handling=lenient', 0],
    ['wait', 0],
  ];
  for (const [header, seconds] of cases) assert.equal(preferredWait(header), seconds, JSON.stringify(header));
});
