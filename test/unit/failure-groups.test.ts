/** The set page's failure groups: an error's signature (the normalising rule) and the grouping of failed members. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorSignature, firstLine, groupFailures, NO_MESSAGE } from '../../src/dashboard/failure-groups.js';

test('a signature is the first line with quoted values, ids, durations and numbers replaced', () => {
  assert.equal(
    errorSignature('TimeoutError: locator.fill: Timeout 30000ms exceeded.\nCall log:\n  - waiting for getByLabel(\'Email\')'),
    'TimeoutError: locator.fill: Timeout <duration> exceeded.',
  );
  assert.equal(errorSignature('expected body to contain "Welcome", got "<html>…"'), 'expected body to contain "…", got "…"');
  assert.equal(errorSignature("Error: no user 'ada' in `users`"), "Error: no user '…' in `…`");
  assert.equal(errorSignature("Error: can't find 'Sign in'"), "Error: can't find '…'");
  assert.equal(errorSignature('set 3f2b1c4d-1e2f-4a5b-8c9d-0e1f2a3b4c5d not found (commit 9fceb02d)'), 'set <id> not found (commit <id>)');
  assert.equal(errorSignature('took 1.5 s, limit 2s; 4 retries'), 'took <duration>, limit <duration>; <n> retries');
  assert.equal(errorSignature('GET http://127.0.0.1:3000/ failed: ECONNREFUSED'), 'GET http://<n>:<n>/ failed: ECONNREFUSED');
  assert.equal(errorSignature('exited with code 1'), errorSignature('exited with code 2'));
});

test('words without a digit stay, extra spaces go', () => {
  assert.equal(errorSignature('Error:   deadbeef   failed'), 'Error: deadbeef failed');
  assert.equal(firstLine('  expect(received).toBe(expected)\n\nExpected: 3'), 'expect(received).toBe(expected)');
});

test('a failure without a message has a signature of its own; a long line is cut', () => {
  assert.equal(errorSignature(null), NO_MESSAGE);
  assert.equal(errorSignature('  \n stack'), NO_MESSAGE);
  const long = errorSignature(`Error: ${'x'.repeat(500)}`);
  assert.equal(long.length, 200);
  assert.ok(long.endsWith('…'));
});

test('failed members group by signature, largest group first, ties in order of appearance', () => {
  const m = (id: string, status: string, error: string | null) => ({ id, name: `test ${id}`, status, error });
  const groups = groupFailures([
    m('a', 'FAIL', 'exited with code 1'),
    m('b', 'SUCCESS', null),
    m('c', 'FAIL', 'TimeoutError: locator.fill: Timeout 5000ms exceeded.'),
    m('d', 'FAIL', 'TimeoutError: locator.fill: Timeout 30000ms exceeded.'),
    m('e', 'FAIL', 'exited with code 2'),
    m('f', 'FAIL', null),
    m('g', 'FAIL', 'TimeoutError: locator.fill: Timeout 30000ms exceeded.'),
    m('h', 'RUNNING', null),
  ]);
  assert.deepEqual(
    groups.map((g) => [g.signature, g.example, g.members.map((x) => x.id)]),
    [
      ['TimeoutError: locator.fill: Timeout <duration> exceeded.', 'TimeoutError: locator.fill: Timeout 5000ms exceeded.', ['c', 'd', 'g']],
      ['exited with code <n>', 'exited with code 1', ['a', 'e']],
      [NO_MESSAGE, NO_MESSAGE, ['f']],
    ],
  );
  assert.deepEqual(groupFailures([m('a', 'SUCCESS', null)]), []);
});
