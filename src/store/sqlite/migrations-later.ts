/**
 * SQLite migrations from 16 on, apart from ./migrations.ts only to keep each
 * file short. Append only: a shipped migration never changes.
 */
/** A SqliteMigration (./migrations.ts) with plain SQL, spelled out: that file imports this one. */
export const LATER_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 16,
    name: 'suite versions',
    sql: `
      -- Suite versions (src/core/suites.ts) and their names; the archives' bytes are files
      -- under <data dir>/suites/. A set's suite: NULL runs the server's own config; the
      -- reference keeps a named version from going, the index counts a version's sets.
      CREATE TABLE suite_versions (id TEXT PRIMARY KEY, size INTEGER NOT NULL, files INTEGER NOT NULL,
        source_commit TEXT, tests TEXT NOT NULL, location TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE TABLE suite_names (name TEXT PRIMARY KEY, version_id TEXT NOT NULL REFERENCES suite_versions(id), updated_at TEXT NOT NULL);
      CREATE INDEX suite_names_version ON suite_names (version_id);
      ALTER TABLE test_run_sets ADD COLUMN suite TEXT REFERENCES suite_versions(id);
      CREATE INDEX test_run_sets_suite ON test_run_sets (suite, created_at) WHERE suite IS NOT NULL;
    `,
  },
  {
    version: 17,
    name: 'set selection',
    sql: `
      -- The selection a set was created with (src/sets/select.ts), as JSON; NULL: every
      -- test of its environment. Kept for its details page and for "run again".
      ALTER TABLE test_run_sets ADD COLUMN selection TEXT;
    `,
  },
  {
    version: 18,
    name: 'skipped members',
    sql: `
      -- A member that ended SUCCESS because Playwright skipped it (test.skip, test.fixme):
      -- written with its outcome, 0 for every other member and for those stored before.
      ALTER TABLE test_runs ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1));
    `,
  },
  {
    version: 21,
    name: 'result cases',
    sql: `
      -- The cases of a member's result (a command's JUnit report, junit:), a JSON list of
      -- {name, status, durationMs, error} written with its outcome; NULL: none.
      ALTER TABLE test_runs ADD COLUMN result_cases TEXT;
    `,
  },
];
