/** Every registered error code is documented in the error table (docs/reference/errors.md), with its status, and nothing else is. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERRORS } from '../../src/core/errors.js';

const README = readFileSync(new URL('../../../docs/reference/errors.md', import.meta.url), 'utf8');

test('README documents exactly the registered error codes', () => {
  const table = README.split('<!-- error-codes:start -->')[1]?.split('<!-- error-codes:end -->')[0] ?? '';
  const rows = [...table.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => [m[2]!, Number(m[1])] as const);
  assert.deepEqual(
    Object.fromEntries(rows),
    Object.fromEntries(Object.entries(ERRORS).map(([code, e]) => [code, e.status])),
  );
});
