/**
 * SQLite migrations from 17 on, apart from ./migrations.ts only to keep each
 * file short. Append only: a shipped migration never changes.
 */
/** A SqliteMigration (./migrations.ts), spelled out: that file imports this one. */
export const LATER_SQLITE_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 17,
    name: 'skipped members',
    sql: `
      -- A member that ended SUCCESS because Playwright skipped it (test.skip, test.fixme):
      -- written with its outcome, 0 for every other member and for those stored before.
      ALTER TABLE test_runs ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1));
    `,
  },
];
