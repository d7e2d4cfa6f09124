import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DurationError, formatDuration, MAX_DURATION_MS, parseDuration } from '../../src/core/duration.js';

test('parseDuration accepts ms, s, m, h and plain seconds', () => {
  const cases: Array<[string, number]> = [
    ['250ms', 250],
    ['0.5s', 500],
    ['10s', 10_000],
    ['10m', 600_000],
    ['1h', 3_600_000],
    ['10', 10_000],
    ['1.5', 1500],
    ['.5s', 500],
    [' 2 m ', 120_000],
    ['0', 0],
    ['10S', 10_000],
    ['7d', 604_800_000],
    ['0.5d', 43_200_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

test('parseDuration rejects what it cannot read, saying what is accepted', () => {
  for (const bad of ['', 'soon', '-1s', '10 minutes', '1w', '1e3', 's', '10ms5', 'NaN', 'Infinity']) {
    assert.throws(
      () => parseDuration(bad),
      (error: unknown) => error instanceof DurationError && /250ms, 0\.5s, 10s, 10m, 1h/.test(error.message) && error.message.includes(JSON.stringify(bad)),
      bad,
    );
  }
});

test('parseDuration rejects durations that would overflow a timer', () => {
  assert.equal(parseDuration(`${MAX_DURATION_MS}ms`), MAX_DURATION_MS);
  assert.throws(() => parseDuration('1000h'), /longer than the maximum/);
  assert.throws(() => parseDuration('30d'), /longer than the maximum/);
});

test('parseDuration takes a larger maximum where no timer is armed with the value (retention)', () => {
  assert.equal(parseDuration('90d', Number.MAX_SAFE_INTEGER), 90 * 86_400_000);
  assert.throws(() => parseDuration('2h', 3_600_000), /longer than the maximum of 1h/);
});

test('formatDuration gives short readable forms', () => {
  assert.equal(formatDuration(250), '250ms');
  assert.equal(formatDuration(4230), '4.2s');
  assert.equal(formatDuration(12_000), '12s');
  assert.equal(formatDuration(185_000), '3m 05s');
  assert.equal(formatDuration(600_000), '10m');
  assert.equal(formatDuration(3_720_000), '1h 02m');
  assert.equal(formatDuration(-1), '?');
});
