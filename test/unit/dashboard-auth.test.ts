/** Pure pieces of dashboard sign-in: cookie parsing and formatting, CSRF comparison, the set-list cursor codec. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csrfMatches, hashSessionId, readCookie, sessionCookie } from '../../src/auth/sessions.js';
import { decodeCursor, encodeCursor } from '../../src/store/browse.js';
import { RunsetError } from '../../src/core/errors.js';

test('readCookie finds one cookie among others, exactly by name', () => {
  assert.equal(readCookie('a=1; runset_session=abc; b=2', 'runset_session'), 'abc');
  assert.equal(readCookie('xrunset_session=no; runset_session=yes', 'runset_session'), 'yes');
  assert.equal(readCookie('runset_session=first; runset_session=second', 'runset_session'), 'first');
  assert.equal(readCookie('other=1', 'runset_session'), undefined);
  assert.equal(readCookie(undefined, 'runset_session'), undefined);
  assert.equal(readCookie('runset_session=', 'runset_session'), '');
});

test('the session cookie is HttpOnly, SameSite=Strict, site-wide, Secure only over HTTPS', () => {
  assert.equal(sessionCookie('v', { secure: false, maxAgeSeconds: 60 }), 'runset_session=v; Path=/; Max-Age=60; HttpOnly; SameSite=Strict');
  assert.equal(sessionCookie('', { secure: true, maxAgeSeconds: 0 }), 'runset_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure');
});

test('CSRF tokens compare exactly, and a missing or repeated header never matches', () => {
  assert.equal(csrfMatches('token-1', 'token-1'), true);
  assert.equal(csrfMatches('token-1', 'token-2'), false);
  assert.equal(csrfMatches('token-1', 'token-10'), false);
  assert.equal(csrfMatches('token-1', undefined), false);
  assert.equal(csrfMatches('token-1', ['token-1', 'token-1']), false);
});

test('session ids are stored as SHA-256 hex, never as given', () => {
  const id = 'A'.repeat(43);
  assert.match(hashSessionId(id), /^[0-9a-f]{64}$/);
  assert.notEqual(hashSessionId(id), id);
});

test('cursors round-trip and anything else is invalid_query', () => {
  const at = { createdAt: '2026-01-02T03:04:05.678Z', id: '3f0e5a4e-2b1c-4d7a-9c1e-8a2b3c4d5e6f' };
  assert.deepEqual(decodeCursor(encodeCursor(at)), at);
  for (const bad of ['', '!!!', Buffer.from('{}').toString('base64url'), Buffer.from('["2026-01-02", "x"]').toString('base64url')]) {
    assert.throws(() => decodeCursor(bad), (err: unknown) => err instanceof RunsetError && err.code === 'invalid_query', bad);
  }
});
