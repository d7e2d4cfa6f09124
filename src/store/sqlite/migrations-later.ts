/**
 * SQLite migrations from 16 on, apart from ./migrations.ts only to keep each
 * file short. Append only: a shipped migration never changes.
 */
/** A SqliteMigration (./migrations.ts) with plain SQL, spelled out: that file imports this one. */
export const LATER_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 17,
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
    version: 18,
    name: 'set selection',
    sql: `
      -- The selection a set was created with (src/sets/select.ts), as JSON; NULL: every
      -- test of its environment. Kept for its details page and for "run again".
      ALTER TABLE test_run_sets ADD COLUMN selection TEXT;
    `,
  },
  {
    version: 19,
    name: 'skipped members',
    sql: `
      -- A member that ended SUCCESS because Playwright skipped it (test.skip, test.fixme):
      -- written with its outcome, 0 for every other member and for those stored before.
      ALTER TABLE test_runs ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1));
    `,
  },
  {
    version: 20,
    name: 'quarantine and the failing count',
    sql: `
      -- The status rule with quarantine and failOnFlaky (src/core/moves.ts failsSet): each
      -- member carries the rules it was planned with, and a set counts the member ends that
      -- fail it. Before this migration every FAIL failed its set, so count_failing starts there.
      ALTER TABLE test_runs ADD COLUMN quarantined INTEGER NOT NULL DEFAULT 0 CHECK (quarantined IN (0, 1));
      ALTER TABLE test_runs ADD COLUMN fail_on_flaky INTEGER NOT NULL DEFAULT 0 CHECK (fail_on_flaky IN (0, 1));
      ALTER TABLE test_run_sets ADD COLUMN count_failing INTEGER NOT NULL DEFAULT 0;
      UPDATE test_run_sets SET count_failing = count_fail;
      -- Quarantined tests (src/store/quarantine.ts): one entry per environment and test name.
      CREATE TABLE quarantine (env TEXT NOT NULL, name TEXT NOT NULL, reason TEXT NOT NULL, until TEXT NOT NULL,
        created_at TEXT NOT NULL, created_by_key_id TEXT, created_by_name TEXT, PRIMARY KEY (env, name));
    `,
  },
  {
    version: 21,
    name: 'queues per environment',
    sql: `
      -- The environment's maxConcurrentSets when the set was created (NULL: no limit). A set's
      -- place in its environment's queue is its rowid: creation order (one writer).
      ALTER TABLE test_run_sets ADD COLUMN max_concurrent INTEGER CHECK (max_concurrent > 0);
      CREATE INDEX test_run_sets_open ON test_run_sets (env) WHERE status IN ('WAITING', 'RUNNING');
      CREATE INDEX test_run_sets_limited ON test_run_sets (env) WHERE max_concurrent IS NOT NULL AND status IN ('WAITING', 'RUNNING');
    `,
  },
  {
    version: 22,
    name: 'set deadlines and concurrency groups',
    sql: `
      -- A set not ended by deadline_at (created_at + timeout_seconds, ISO) is cancelled
      -- (src/sets/deadlines.ts); NULL for sets stored before deadlines: they have none.
      ALTER TABLE test_run_sets ADD COLUMN timeout_seconds INTEGER CHECK (timeout_seconds > 0);
      ALTER TABLE test_run_sets ADD COLUMN deadline_at TEXT;
      CREATE INDEX test_run_sets_deadline ON test_run_sets (deadline_at) WHERE status IN ('WAITING', 'RUNNING') AND deadline_at IS NOT NULL;
      -- A new set of a group cancels the group's older unfinished sets of its environment (src/sets/supersede.ts).
      ALTER TABLE test_run_sets ADD COLUMN concurrency_group TEXT;
      CREATE INDEX test_run_sets_group ON test_run_sets (env, concurrency_group) WHERE status IN ('WAITING', 'RUNNING') AND concurrency_group IS NOT NULL;
    `,
  },
  {
    version: 23,
    name: 'result cases',
    sql: `
      -- The cases of a member's result (a command's JUnit report, junit:), a JSON list of
      -- {name, status, durationMs, error} written with its outcome; NULL: none.
      ALTER TABLE test_runs ADD COLUMN result_cases TEXT;
    `,
  },
  {
    version: 25,
    name: 'result cases in history',
    sql: `
      -- Each case of a member's result that ran (src/core/result-cases.ts: not the skipped ones) is a
      -- run of its own test in history, named "<member> › <case>", written with the member's outcome.
      CREATE TABLE test_run_cases (
        run_id TEXT NOT NULL REFERENCES test_runs(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        env TEXT NOT NULL,
        name TEXT NOT NULL,
        set_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('SUCCESS', 'FAIL')),
        duration_ms INTEGER,
        error TEXT,
        ended_at TEXT NOT NULL,
        PRIMARY KEY (run_id, position)
      );
      CREATE INDEX test_run_cases_history ON test_run_cases (env, name, ended_at, run_id);
    `,
  },
  {
    version: 28,
    name: 'workers bound to their keys',
    sql: `
      -- The key that registered a worker over HTTP (NULL: a worker of the store's own): only that
      -- key may heartbeat, re-register or remove it. The registry is live state, not history:
      -- its rows are dropped, and every live worker registers again at its next heartbeat.
      ALTER TABLE workers ADD COLUMN key_id TEXT;
      DELETE FROM workers;
    `,
  },
  {
    version: 29,
    name: 'member starts',
    sql: `
      -- At-least-once made visible (src/core/starts.ts): how many times a member was started
      -- (moved to RUNNING from WAITING), and why each start it lost was lost, in order: a JSON
      -- list of 'lease lost' (the reaper) and 'worker lost' (given back after it began). A member
      -- that began before this step is counted one start: what was known of it.
      ALTER TABLE test_runs ADD COLUMN starts INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE test_runs ADD COLUMN lost_starts TEXT NOT NULL DEFAULT '[]';
      UPDATE test_runs SET starts = 1 WHERE started_at IS NOT NULL;
      -- A test's window of latest runs reads its starts too (a rerun after a lost start is
      -- counted apart from a retry): migration 14's covering index, with starts.
      DROP INDEX test_runs_history;
      CREATE INDEX test_runs_history ON test_runs(env, name, ended_at, id, status, attempts, duration_ms, set_id, type, starts)
        WHERE ended_at IS NOT NULL;
    `,
  },
];
