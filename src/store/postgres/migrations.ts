/**
 * Numbered PostgreSQL migrations. Append only: a shipped migration never changes.
 * Each one is a function of the (quoted) schema, because every table lives in the
 * store's own schema rather than on the search_path.
 */
import type pg from 'pg';
import { retentionWhenUnset } from '../retention.js';
import { quoteIdent, withTransaction } from './connection.js';
import { LATER_MIGRATIONS } from './migrations-later.js';

export interface PgMigration {
  version: number;
  name: string;
  /** The SQL for the (quoted) schema; `found`: the versions the store had before this run, for a migration that records what the store was. */
  sql: (schema: string, found: ReadonlySet<number>) => string;
}

/** The set retention migration: a store that had it was already swept by default. */
const SET_RETENTION = 12;

export const POSTGRES_MIGRATIONS: readonly PgMigration[] = Object.freeze([
  {
    version: 1,
    name: 'sets, runs and keys',
    sql: (s: string) => `
      CREATE TABLE ${s}.api_keys (
        id           text PRIMARY KEY,
        name         text NOT NULL,
        hash         text NOT NULL UNIQUE,
        created_at   timestamptz NOT NULL,
        last_used_at timestamptz,
        revoked_at   timestamptz
      );

      -- The set row carries its derived status and counts, so reading a set's
      -- status is one primary-key lookup with no COUNT over its members.
      -- Ids are text, not uuid: the store hands back exactly what it was given
      -- and an id that is not a uuid is simply not found (as with SQLite).
      -- Variables and specs are json, not jsonb: they come back byte for byte,
      -- key order included (an HTTP check's JSON body is sent as stored).
      CREATE TABLE ${s}.test_run_sets (
        id            text PRIMARY KEY,
        env           text NOT NULL,
        status        text NOT NULL CHECK (status IN ('WAITING', 'RUNNING', 'SUCCESS', 'FAIL')),
        created_at    timestamptz NOT NULL,
        started_at    timestamptz,
        ended_at      timestamptz,
        count_waiting integer NOT NULL,
        count_running integer NOT NULL DEFAULT 0,
        count_success integer NOT NULL DEFAULT 0,
        count_fail    integer NOT NULL DEFAULT 0,
        variables     json NOT NULL,
        overrides     json NOT NULL,
        key_id        text
      );

      CREATE TABLE ${s}.test_runs (
        -- Insertion order: claims take the oldest waiting member first.
        seq              bigint GENERATED ALWAYS AS IDENTITY,
        id               text PRIMARY KEY,
        set_id           text NOT NULL REFERENCES ${s}.test_run_sets(id),
        position         integer NOT NULL,
        name             text NOT NULL,
        type             text NOT NULL,
        spec             json NOT NULL,
        status           text NOT NULL CHECK (status IN ('WAITING', 'RUNNING', 'SUCCESS', 'FAIL')),
        attempts         integer NOT NULL DEFAULT 0,
        claims           integer NOT NULL DEFAULT 0, -- fencing token, bumped by every claim
        lost_leases      integer NOT NULL DEFAULT 0, -- leases that expired (worker lost)
        worker_id        text,
        lease_expires_at timestamptz,
        started_at       timestamptz,
        ended_at         timestamptz,
        duration_ms      integer,
        error            text,
        output           text
      );
      CREATE INDEX test_runs_by_set ON ${s}.test_runs (set_id, position);
      -- Claims walk only waiting members, in insertion order.
      CREATE INDEX test_runs_waiting ON ${s}.test_runs (seq) WHERE status = 'WAITING';
      CREATE INDEX test_runs_leases ON ${s}.test_runs (lease_expires_at) WHERE status = 'RUNNING';
    `,
  },
  {
    version: 2,
    name: 'batched members (Playwright cases) and artifacts',
    sql: (s: string) => `
      -- Members with a batch key run together in one executor call (the cases of a
      -- Playwright suite). They are claimed *reserved*: leased (worker_id and
      -- lease_expires_at set) but still WAITING until their test case begins.
      ALTER TABLE ${s}.test_runs ADD COLUMN batch_key text;
      CREATE INDEX test_runs_claimable ON ${s}.test_runs (seq) WHERE status = 'WAITING' AND worker_id IS NULL;
      CREATE INDEX test_runs_batch ON ${s}.test_runs (set_id, batch_key, seq) WHERE status = 'WAITING' AND worker_id IS NULL;
      -- Every leased member, running or reserved, for the reaper.
      CREATE INDEX test_runs_leased ON ${s}.test_runs (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

      -- Screenshots, traces and videos. Metadata here; the bytes in artifact_chunks
      -- (location 'pg:<id>'), so that an artifact a worker on one machine wrote is
      -- served by an API process on another.
      CREATE TABLE ${s}.artifacts (
        id           text PRIMARY KEY,
        run_id       text NOT NULL REFERENCES ${s}.test_runs(id),
        set_id       text NOT NULL,
        name         text NOT NULL,
        content_type text NOT NULL,
        size         bigint NOT NULL,
        location     text NOT NULL,
        created_at   timestamptz NOT NULL
      );
      CREATE INDEX artifacts_by_set ON ${s}.artifacts (set_id, run_id);
      CREATE INDEX artifacts_by_age ON ${s}.artifacts (created_at);
      -- Written before the artifact row (which comes with the member's outcome,
      -- under its lease): chunks whose row never came are swept by age.
      CREATE TABLE ${s}.artifact_chunks (
        blob_id    text NOT NULL,
        seq        integer NOT NULL,
        data       bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (blob_id, seq)
      );
      CREATE INDEX artifact_chunks_by_age ON ${s}.artifact_chunks (created_at) WHERE seq = 0;
    `,
  },
  {
    version: 4,
    name: 'idempotency keys',
    sql: (s: string) => `
      CREATE TABLE ${s}.idempotency_keys (
        key_id     text NOT NULL,
        key        text NOT NULL,
        body_hash  text NOT NULL,
        -- Deferred: the key is taken first (that is the race), the set inserted after.
        set_id     text NOT NULL REFERENCES ${s}.test_run_sets(id) DEFERRABLE INITIALLY DEFERRED,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (key_id, key)
      );
      CREATE INDEX idempotency_keys_expiry ON ${s}.idempotency_keys(expires_at);
    `,
  },
  {
    version: 3,
    name: 'dashboard: set listing indexes and browser sessions',
    sql: (s: string) => `
      -- The dashboard lists sets newest first, optionally by environment or status,
      -- paging on (created_at, id): each filter walks its own index backwards, no sort.
      CREATE INDEX test_run_sets_recent ON ${s}.test_run_sets (created_at, id);
      CREATE INDEX test_run_sets_env_recent ON ${s}.test_run_sets (env, created_at, id);
      CREATE INDEX test_run_sets_status_recent ON ${s}.test_run_sets (status, created_at, id);

      -- Browser sessions, shared by every API process on this database. Only a
      -- hash of the cookie's session id is kept.
      CREATE TABLE ${s}.sessions (
        id_hash    text PRIMARY KEY,
        key_id     text NOT NULL REFERENCES ${s}.api_keys(id),
        csrf_token text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX sessions_expiry ON ${s}.sessions (expires_at);
    `,
  },
  {
    version: 5,
    name: 'member moves as single statements',
    sql: (s: string) => `
      -- Superseded by test_runs_claimable and test_runs_leased (migration 2): every
      -- member move had to keep them up to date, and no query reads them.
      DROP INDEX ${s}.test_runs_waiting;
      DROP INDEX ${s}.test_runs_leases;

      -- A member move is one SQL statement (src/store/postgres/sql.ts). Plain SQL has
      -- no RAISE: a statement calls this to refuse a move the state machine forbids,
      -- and everything it did, claims included, rolls back.
      CREATE FUNCTION ${s}.refuse_move(message text) RETURNS text LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION USING MESSAGE = message, ERRCODE = 'check_violation';
      END
      $$;
    `,
  },
  {
    version: 6,
    name: 'fan-out: expected durations, where members ran, duration history',
    sql: (s: string) => `
      -- Members are inserted longest expected first (their seq is their claim
      -- order); expected_ms is what that order and each worker's share were
      -- computed from. ran_on: the worker that started the member's last attempt.
      ALTER TABLE ${s}.test_runs ADD COLUMN expected_ms integer, ADD COLUMN ran_on text;

      -- Each test's last successful durations per environment (newest last, at most
      -- 10, DURATION_SAMPLES in src/store/store.ts): their median is its expected duration. Kept apart from sets and
      -- members so that removing old sets never loses it.
      CREATE TABLE ${s}.test_durations (
        env        text NOT NULL,
        name       text NOT NULL,
        samples    jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (env, name)
      );
    `,
  },
  {
    version: 7,
    name: 'workers registry',
    sql: (s: string) => `
      -- Every live worker process, heartbeating by the database's clock; fan-out
      -- sizes shares from the slots of the live ones (src/scheduler/registration.ts).
      CREATE TABLE ${s}.workers (
        id           text PRIMARY KEY,
        host         text NOT NULL,
        pid          integer NOT NULL,
        slots        integer NOT NULL,
        started_at   timestamptz NOT NULL DEFAULT now(),
        heartbeat_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 8,
    name: 'cancel and fail fast',
    sql: (s: string) => `
      -- max_failures: the environment's fail-fast limit when the set was created.
      -- cancelled_*: who ended the set early (a key, or fail fast with no key) and
      -- the error its cancelled members got. Read apart from the status GET's columns.
      ALTER TABLE ${s}.test_run_sets
        ADD COLUMN max_failures integer,
        ADD COLUMN cancelled_at timestamptz,
        ADD COLUMN cancelled_by text,
        ADD COLUMN cancelled_by_name text,
        ADD COLUMN cancel_error text;
    `,
  },
  {
    version: 9,
    name: 'webhooks: set events and deliveries',
    sql: (s: string) => `
      -- The outbox. A set's start and end are written here by a trigger, in the
      -- transaction that changes the set (whichever process made it); a
      -- delivering process turns each into one delivery per matching webhook.
      CREATE TABLE ${s}.set_events (
        id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        set_id text NOT NULL,
        event  text NOT NULL
      );
      CREATE FUNCTION ${s}.record_set_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.started_at IS NULL AND NEW.started_at IS NOT NULL AND NEW.status = 'RUNNING' THEN
          INSERT INTO ${s}.set_events (set_id, event) VALUES (NEW.id, 'set.started');
        END IF;
        IF NEW.status IN ('SUCCESS', 'FAIL') AND OLD.status NOT IN ('SUCCESS', 'FAIL') THEN
          INSERT INTO ${s}.set_events (set_id, event) VALUES (NEW.id, 'set.finished');
        END IF;
        RETURN NULL;
      END $$;
      -- The WHEN clause is checked without calling the function: the many moves
      -- that change only counts pay for one comparison.
      CREATE TRIGGER set_events AFTER UPDATE ON ${s}.test_run_sets FOR EACH ROW
        WHEN ((OLD.started_at IS NULL AND NEW.started_at IS NOT NULL AND NEW.status = 'RUNNING')
          OR (NEW.status IN ('SUCCESS', 'FAIL') AND OLD.status NOT IN ('SUCCESS', 'FAIL')))
        EXECUTE FUNCTION ${s}.record_set_event();

      CREATE TABLE ${s}.webhook_deliveries (
        id               text PRIMARY KEY,
        event_id         bigint NOT NULL,
        webhook          text NOT NULL,
        set_id           text NOT NULL,
        event            text NOT NULL,
        state            text NOT NULL DEFAULT 'pending', -- pending | delivered | failed
        created_at       timestamptz NOT NULL,
        next_attempt_at  timestamptz NOT NULL,
        lease_expires_at timestamptz,
        lease_token      text,
        attempts         integer NOT NULL DEFAULT 0,
        body             text,                           -- rendered at the first attempt, sent by every one
        delivered_at     timestamptz,
        UNIQUE (event_id, webhook)
      );
      CREATE INDEX webhook_deliveries_due ON ${s}.webhook_deliveries (next_attempt_at) WHERE state = 'pending';
      CREATE INDEX webhook_deliveries_by_set ON ${s}.webhook_deliveries (set_id, created_at);

      CREATE TABLE ${s}.webhook_attempts (
        delivery_id text NOT NULL REFERENCES ${s}.webhook_deliveries(id),
        n           integer NOT NULL,
        at          timestamptz NOT NULL,
        status_code integer,
        error       text,
        duration_ms integer NOT NULL,
        PRIMARY KEY (delivery_id, n)
      );
    `,
  },
  {
    version: 10,
    name: 'key scopes: role, environments, expiry',
    sql: (s: string) => `
      -- Keys made before scopes keep what they could do: admin, every environment, no expiry.
      -- envs NULL: every environment.
      ALTER TABLE ${s}.api_keys
        ADD COLUMN role text NOT NULL DEFAULT 'admin' CHECK (role IN ('read', 'trigger', 'admin')),
        ADD COLUMN envs text[],
        ADD COLUMN expires_at timestamptz;
    `,
  },
  {
    version: 11,
    name: 'set labels',
    sql: (s: string) => `
      -- CI context a client sent with the set (commit, branch, pipeline…). The GIN
      -- index serves the list's label filter (labels @> '{"branch":"main"}').
      ALTER TABLE ${s}.test_run_sets ADD COLUMN labels jsonb NOT NULL DEFAULT '{}';
      CREATE INDEX test_run_sets_labels ON ${s}.test_run_sets USING gin (labels jsonb_path_ops);
    `,
  },
  {
    version: 12,
    name: 'set retention',
    sql: (s: string) => `
      -- The retention sweep takes sets that ended before a time, oldest end first.
      -- Only ended sets have ended_at, and only they are ever removed.
      CREATE INDEX test_run_sets_ended ON ${s}.test_run_sets (ended_at) WHERE ended_at IS NOT NULL;
      -- A removed set's idempotency keys go with it, and the foreign key's check on
      -- each deleted set would otherwise scan the table.
      CREATE INDEX idempotency_keys_by_set ON ${s}.idempotency_keys (set_id);
      -- Each removed member's foreign-key check looks for artifacts naming it:
      -- without this, a scan of every artifact per member.
      CREATE INDEX artifacts_by_run ON ${s}.artifacts (run_id);
    `,
  },
  {
    version: 13,
    name: 'test history: members by environment, name and end',
    sql: (s: string) => `
      -- A member's environment is its set's, copied onto it (at insert from now on,
      -- here for the members already kept) so that one index holds a test's ended
      -- runs in one environment, newest last: the tests list walks its distinct
      -- names and takes each one's latest runs, a test's history pages backwards
      -- through it (src/store/postgres/history-sql.ts; plans in bench/README.md).
      -- Names in byte order (COLLATE "C"), as SQLite orders them, whatever the
      -- database's locale: both stores list and page tests alike.
      ALTER TABLE ${s}.test_runs ADD COLUMN env text;
      UPDATE ${s}.test_runs r SET env = t.env FROM ${s}.test_run_sets t WHERE t.id = r.set_id;
      CREATE INDEX test_runs_history ON ${s}.test_runs (env, name COLLATE "C", ended_at, id) WHERE ended_at IS NOT NULL;
    `,
  },
  {
    version: 14,
    name: 'test history: the index covers a test window',
    sql: (s: string) => `
      -- Migration 13's index, now with INCLUDE columns holding what each test's window
      -- of latest runs reads (all but the error, read for failures alone): an
      -- index-only scan where the visibility map allows, instead of 50 heap rows
      -- per test (bench/README.md, bench:history).
      DROP INDEX ${s}.test_runs_history;
      CREATE INDEX test_runs_history ON ${s}.test_runs (env, name COLLATE "C", ended_at, id)
        INCLUDE (status, attempts, duration_ms, set_id, type) WHERE ended_at IS NOT NULL;
    `,
  },
  {
    version: 15,
    name: 'store settings: what serve does with no retention given',
    sql: (s: string, found: ReadonlySet<number>) => `
      -- Facts about this store that the code reads, one row each. retention_when_unset:
      -- 'keep' on a store made before set retention existed (its history is kept until
      -- the operator sets --retention), 'default' otherwise (src/store/retention.ts).
      CREATE TABLE ${s}.store_settings (
        name  text PRIMARY KEY,
        value text NOT NULL
      );
      INSERT INTO ${s}.store_settings (name, value) VALUES ('retention_when_unset', '${retentionWhenUnset(found, SET_RETENTION)}');
    `,
  },
  ...LATER_MIGRATIONS,
]);

/**
 * Applies pending migrations in one transaction under an advisory lock keyed on
 * the schema, so that processes starting together take turns: the first applies,
 * the others then find nothing to do. The lock is taken before CREATE SCHEMA IF
 * NOT EXISTS, which is not itself safe against a concurrent twin.
 */
export async function migrate(pool: pg.Pool, schema: string): Promise<void> {
  const s = quoteIdent(schema);
  await withTransaction(pool, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('runset.migrate'), hashtext($1))", [schema]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await tx.query(`
      CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    const { rows } = await tx.query<{ version: number }>(`SELECT version FROM ${s}.schema_migrations`);
    const applied = new Set(rows.map((r) => r.version));
    for (const m of [...POSTGRES_MIGRATIONS].sort((a, b) => a.version - b.version)) {
      if (applied.has(m.version)) continue;
      await tx.query(m.sql(s, applied));
      await tx.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
  });
}
