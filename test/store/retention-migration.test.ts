/**
 * What a store records about retention when it is migrated (src/store/retention.ts,
 * RetentionWhenUnset), on both stores: one made by a runset without set
 * retention keeps every set when serve is given none, with or without rows; one
 * that already had retention, and a new one (the contract), take the default;
 * migrating again changes nothing. The PostgreSQL half needs RUNSET_TEST_DATABASE_URL.
 */
import { test } from 'node:test';
import type { Store } from '../../src/store/store.js';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import type { RetentionWhenUnset } from '../../src/store/retention.js';
import { dropSchemas, newSchemaName, NO_DATABASE, query, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { tempDir } from '../helpers/server.js';
import { postgresBefore, sqliteBefore } from '../helpers/old-store.js';

const versionOf = (migrations: ReadonlyArray<{ version: number; name: string }>, name: string) => migrations.find((m) => m.name.startsWith(name))!.version;
const FIRST_RELEASE = 3;
const A_YEAR_AGO = new Date(Date.now() - 365 * 86_400_000).toISOString();
const SET_ROW = `(id, env, status, created_at, started_at, ended_at, count_waiting, count_success, variables, overrides)`;

/** Each case: the version the old store stops before, whether it holds an ended set, and what it must record. */
const CASES: Array<{ title: string; before: (m: ReadonlyArray<{ version: number; name: string }>) => number; withSet: boolean; expected: RetentionWhenUnset }> = [
  { title: 'the first release, with a set that ended a year ago', before: () => FIRST_RELEASE, withSet: true, expected: 'keep' },
  { title: 'the release just before set retention, empty', before: (m) => versionOf(m, 'set retention'), withSet: false, expected: 'keep' },
  { title: 'a release that had set retention, with a set', before: (m) => versionOf(m, 'store settings'), withSet: true, expected: 'default' },
];

for (const c of CASES) {
  test(`sqlite: a store of ${c.title} records '${c.expected}' for a serve given no retention`, async () => {
    const file = path.join(tempDir('runset-retmig-'), 'runset.db');
    const db = sqliteBefore(file, c.before(SQLITE_MIGRATIONS));
    if (c.withSet) db.prepare(`INSERT INTO test_run_sets ${SET_ROW} VALUES (?, 'staging', 'SUCCESS', ?, ?, ?, 0, 1, '{}', '{}')`).run(randomUUID(), A_YEAR_AGO, A_YEAR_AGO, A_YEAR_AGO);
    db.close();
    await openTwice(() => new SqliteStore(file), c);
  });

  test(`postgres: a store of ${c.title} records '${c.expected}' for a serve given no retention`, { skip: TEST_DATABASE_URL ? undefined : NO_DATABASE }, async () => {
    const url = TEST_DATABASE_URL!;
    const schema = newSchemaName('runset_retmig');
    try {
      const s = await postgresBefore(url, schema, c.before(POSTGRES_MIGRATIONS));
      if (c.withSet) await query(url, `INSERT INTO ${s}.test_run_sets ${SET_ROW} VALUES ($1, 'staging', 'SUCCESS', $2, $2, $2, 0, 1, '{}', '{}')`, [randomUUID(), A_YEAR_AGO]);
      await openTwice(() => new PostgresStore({ connectionString: url, schema }), c);
    } finally {
      await dropSchemas(url, [schema]);
    }
  });
}

/** Opens the migrated store twice: the first open records the choice, the second changes nothing. */
async function openTwice(open: () => Store, c: { expected: string; withSet: boolean }): Promise<void> {
  for (let time = 0; time < 2; time++) {
    const store = open();
    await store.migrate();
    try {
      assert.equal(await store.retention.whenUnset(), c.expected, time === 0 ? 'upgraded' : 'opened again: unchanged');
      assert.deepEqual(await store.retention.dueBefore(new Date().toISOString()), { sets: c.withSet ? 1 : 0, oldestEndedAt: c.withSet ? A_YEAR_AGO : null });
    } finally {
      await store.close();
    }
  }
}
