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
    version: 22,
    name: 'result cases',
    sql: (s: string) => `
      -- The cases of a member's result (a command's JUnit report, junit:), a list of
      -- {name, status, durationMs, error} written with its outcome; NULL: none.
      ALTER TABLE ${s}.test_runs ADD COLUMN result_cases jsonb;
    `,
  },
];
