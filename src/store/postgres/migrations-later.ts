/**
 * PostgreSQL migrations from 16 on, apart from ./migrations.ts only to keep each
 * file short. Append only: a shipped migration never changes.
 */
/** A PgMigration (./migrations.ts), spelled out: that file imports this one. */
export const LATER_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: (schema: string) => string }> = [
  {
    version: 16,
    name: 'key roles: worker',
    sql: (s: string) => `
      -- Worker keys may use the worker protocol and nothing else (src/auth/policy.ts).
      -- Migration 10's CHECK took PostgreSQL's default name, <table>_<column>_check.
      ALTER TABLE ${s}.api_keys
        DROP CONSTRAINT api_keys_role_check,
        ADD CONSTRAINT api_keys_role_check CHECK (role IN ('read', 'trigger', 'admin', 'worker'));
    `,
  },
  {
    version: 17,
    name: 'suite versions',
    sql: (s: string) => `
      -- Suite versions (src/core/suites.ts): a suite's archive, named by its bytes'
      -- SHA-256, with the tests planned from it at upload (json: paths under VERSION_ROOT).
      CREATE TABLE ${s}.suite_versions (
        id            text PRIMARY KEY,
        size          bigint NOT NULL,
        files         integer NOT NULL,
        source_commit text,
        tests         json NOT NULL,
        location      text NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now()
      );
      -- Published names (main, pr-123): each points at one version at a time.
      CREATE TABLE ${s}.suite_names (
        name       text PRIMARY KEY,
        version_id text NOT NULL REFERENCES ${s}.suite_versions(id),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX suite_names_version ON ${s}.suite_names (version_id);
      -- The version a set runs; NULL: the server's own config. The reference keeps a
      -- version from going while a set names it; the index serves that check, the
      -- versions' set counts and the retention sweep.
      ALTER TABLE ${s}.test_run_sets ADD COLUMN suite text REFERENCES ${s}.suite_versions(id);
      CREATE INDEX test_run_sets_suite ON ${s}.test_run_sets (suite, created_at) WHERE suite IS NOT NULL;
      -- Archives' bytes, as artifact_chunks but apart: the artifact orphan sweep never sees them.
      CREATE TABLE ${s}.suite_chunks (
        blob_id    text NOT NULL,
        seq        integer NOT NULL,
        data       bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (blob_id, seq)
      );
    `,
  },
  {
    version: 18,
    name: 'set selection',
    sql: (s: string) => `
      -- The selection a set was created with (src/sets/select.ts); NULL: every test of
      -- its environment. Kept for its details page and for "run again".
      ALTER TABLE ${s}.test_run_sets ADD COLUMN selection jsonb;
    `,
  },
  {
    version: 19,
    name: 'skipped members',
    sql: (s: string) => `
      -- A member that ended SUCCESS because Playwright skipped it (test.skip, test.fixme):
      -- written with its outcome, false for every other member and for those stored before.
      ALTER TABLE ${s}.test_runs ADD COLUMN skipped boolean NOT NULL DEFAULT false;
    `,
  },
  {
    version: 20,
    name: 'quarantine and the failing count',
    sql: (s: string) => `
      -- The status rule with quarantine and failOnFlaky (src/core/moves.ts failsSet): each
      -- member carries the rules it was planned with, and a set counts the member ends that
      -- fail it. Before this migration every FAIL failed its set, so count_failing starts there.
      ALTER TABLE ${s}.test_runs ADD COLUMN quarantined boolean NOT NULL DEFAULT false,
        ADD COLUMN fail_on_flaky boolean NOT NULL DEFAULT false;
      ALTER TABLE ${s}.test_run_sets ADD COLUMN count_failing integer NOT NULL DEFAULT 0;
      UPDATE ${s}.test_run_sets SET count_failing = count_fail WHERE count_fail > 0;
      -- Quarantined tests (src/store/quarantine.ts): one entry per environment and test name.
      CREATE TABLE ${s}.quarantine (env text NOT NULL, name text NOT NULL, reason text NOT NULL, until timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(), created_by_key_id text, created_by_name text, PRIMARY KEY (env, name));
    `,
  },
  {
    version: 21,
    name: 'queues per environment',
    sql: (s: string) => `
      -- The environment's maxConcurrentSets when the set was created (NULL: no limit), and
      -- its place in its environment's queue: creation order, numbered under a lock per
      -- environment (postgres/sets.ts), so a set numbered later is never committed earlier.
      ALTER TABLE ${s}.test_run_sets ADD COLUMN max_concurrent integer CHECK (max_concurrent > 0);
      ALTER TABLE ${s}.test_run_sets ADD COLUMN queue_seq bigint GENERATED ALWAYS AS IDENTITY;
      -- Which sets are queued is read from the unfinished sets of the environments with a limit.
      CREATE INDEX test_run_sets_open ON ${s}.test_run_sets (env, queue_seq) WHERE status IN ('WAITING', 'RUNNING');
      CREATE INDEX test_run_sets_limited ON ${s}.test_run_sets (env) WHERE max_concurrent IS NOT NULL AND status IN ('WAITING', 'RUNNING');
      -- A set with a limit that ends may let the next one start: wake the claimers, whichever
      -- move ended it (the channel is statements.ts channelOf).
      CREATE FUNCTION ${s}.wake_queue() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('runset_' || TG_TABLE_SCHEMA || '_waiting', '');
        RETURN NULL;
      END $$;
      CREATE TRIGGER wake_queue AFTER UPDATE ON ${s}.test_run_sets FOR EACH ROW
        WHEN (NEW.max_concurrent IS NOT NULL AND NEW.status IN ('SUCCESS', 'FAIL') AND OLD.status NOT IN ('SUCCESS', 'FAIL'))
        EXECUTE FUNCTION ${s}.wake_queue();
    `,
  },
  {
    version: 22,
    name: 'set deadlines and concurrency groups',
    sql: (s: string) => `
      -- A set not ended by deadline_at (created_at + timeout_seconds) is cancelled
      -- (src/sets/deadlines.ts); NULL for sets stored before deadlines: they have none.
      ALTER TABLE ${s}.test_run_sets ADD COLUMN timeout_seconds integer CHECK (timeout_seconds > 0);
      ALTER TABLE ${s}.test_run_sets ADD COLUMN deadline_at timestamptz;
      CREATE INDEX test_run_sets_deadline ON ${s}.test_run_sets (deadline_at) WHERE status IN ('WAITING', 'RUNNING') AND deadline_at IS NOT NULL;
      -- A new set of a group cancels the group's older unfinished sets of its environment (src/sets/supersede.ts).
      ALTER TABLE ${s}.test_run_sets ADD COLUMN concurrency_group text;
      CREATE INDEX test_run_sets_group ON ${s}.test_run_sets (env, concurrency_group, queue_seq)
        WHERE status IN ('WAITING', 'RUNNING') AND concurrency_group IS NOT NULL;
    `,
  },
  {
    version: 23,
    name: 'result cases',
    sql: (s: string) => `
      -- The cases of a member's result (a command's JUnit report, junit:), a list of
      -- {name, status, durationMs, error} written with its outcome; NULL: none.
      ALTER TABLE ${s}.test_runs ADD COLUMN result_cases jsonb;
    `,
  },
  {
    version: 25,
    name: 'result cases in history',
    sql: (s: string) => `
      -- Each case of a member's result that ran (src/core/result-cases.ts: not the skipped ones) is a
      -- run of its own test in history, named "<member> › <case>", written with the member's outcome.
      CREATE TABLE ${s}.test_run_cases (
        run_id text NOT NULL REFERENCES ${s}.test_runs(id) ON DELETE CASCADE,
        position integer NOT NULL,
        env text NOT NULL,
        name text NOT NULL,
        set_id text NOT NULL,
        status text NOT NULL CHECK (status IN ('SUCCESS', 'FAIL')),
        duration_ms integer,
        error text,
        ended_at timestamptz NOT NULL,
        PRIMARY KEY (run_id, position)
      );
      CREATE INDEX test_run_cases_history ON ${s}.test_run_cases (env, name COLLATE "C", ended_at, run_id);
    `,
  },
  {
    version: 28,
    name: 'workers bound to their keys',
    sql: (s: string) => `
      -- The key that registered a worker over HTTP (NULL: a worker of the store's own): only that
      -- key may heartbeat, re-register or remove it. The registry is live state, not history:
      -- its rows are dropped, and every live worker registers again at its next heartbeat.
      ALTER TABLE ${s}.workers ADD COLUMN key_id text;
      DELETE FROM ${s}.workers;
    `,
  },
  {
    version: 29,
    name: 'member starts',
    sql: (s: string) => `
      -- At-least-once made visible (src/core/starts.ts): how many times a member was started
      -- (moved to RUNNING from WAITING), and why each start it lost was lost, in order: a JSON
      -- list of 'lease lost' (the reaper) and 'worker lost' (given back after it began). A member
      -- that began before this step is counted one start: what was known of it.
      ALTER TABLE ${s}.test_runs ADD COLUMN starts integer NOT NULL DEFAULT 0,
        ADD COLUMN lost_starts jsonb NOT NULL DEFAULT '[]';
      UPDATE ${s}.test_runs SET starts = 1 WHERE started_at IS NOT NULL;
      -- A test's window of latest runs reads its starts too (a rerun after a lost start is
      -- counted apart from a retry): migration 14's index, with starts among its INCLUDE columns.
      DROP INDEX ${s}.test_runs_history;
      CREATE INDEX test_runs_history ON ${s}.test_runs (env, name COLLATE "C", ended_at, id)
        INCLUDE (status, attempts, duration_ms, set_id, type, starts) WHERE ended_at IS NOT NULL;
    `,
  },
];
