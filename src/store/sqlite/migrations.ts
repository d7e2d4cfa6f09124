/**
 * Numbered SQLite migrations. Append only: a shipped migration never changes.
 */
import type Database from 'better-sqlite3';
import { retentionWhenUnset } from '../retention.js';
import { now } from './statements.js';
import { LATER_MIGRATIONS } from './migrations-later.js';
import { renumberToLadder } from './migration-numbers.js';

export interface SqliteMigration {
  version: number;
  name: string;
  /** The SQL, or a function of the versions the store had before this run (for a migration that records what the store was). */
  sql: string | ((found: ReadonlySet<number>) => string);
}

/** The set retention migration: a store that had it was already swept by default. */
const SET_RETENTION = 12;

export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'sets, runs and keys',
    sql: `
      CREATE TABLE api_keys (
        id           TEXT PRIMARY KEY,
        name         TEXT NOT NULL,
        hash         TEXT NOT NULL UNIQUE,
        created_at   TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at   TEXT
      );

      -- The set row carries its derived status and counts, so reading a set's
      -- status is one primary-key lookup with no COUNT over its members.
      CREATE TABLE test_run_sets (
        id            TEXT PRIMARY KEY,
        env           TEXT NOT NULL,
        status        TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        started_at    TEXT,
        ended_at      TEXT,
        count_waiting INTEGER NOT NULL,
        count_running INTEGER NOT NULL DEFAULT 0,
        count_success INTEGER NOT NULL DEFAULT 0,
        count_fail    INTEGER NOT NULL DEFAULT 0,
        variables     TEXT NOT NULL,
        overrides     TEXT NOT NULL,
        key_id        TEXT
      );

      CREATE TABLE test_runs (
        id               TEXT PRIMARY KEY,
        set_id           TEXT NOT NULL REFERENCES test_run_sets(id),
        position         INTEGER NOT NULL,
        name             TEXT NOT NULL,
        type             TEXT NOT NULL,
        spec             TEXT NOT NULL,
        status           TEXT NOT NULL,
        attempts         INTEGER NOT NULL DEFAULT 0,
        claims           INTEGER NOT NULL DEFAULT 0, -- fencing token, bumped by every claim
        lost_leases      INTEGER NOT NULL DEFAULT 0, -- leases that expired (worker lost)
        worker_id        TEXT,
        lease_expires_at INTEGER,
        started_at       TEXT,
        ended_at         TEXT,
        duration_ms      INTEGER,
        error            TEXT,
        output           TEXT
      );
      CREATE INDEX test_runs_by_set ON test_runs(set_id, position);
      -- Claims scan only waiting members, in insertion (rowid) order.
      CREATE INDEX test_runs_waiting ON test_runs(status) WHERE status = 'WAITING';
      CREATE INDEX test_runs_leases ON test_runs(lease_expires_at) WHERE status = 'RUNNING';
    `,
  },
  {
    version: 2,
    name: 'batched members (Playwright cases) and artifacts',
    sql: `
      -- Members with a batch key run together in one executor call (the cases of a
      -- Playwright suite). They are claimed *reserved*: leased (worker_id and
      -- lease_expires_at set) but still WAITING until their test case begins.
      ALTER TABLE test_runs ADD COLUMN batch_key TEXT;
      CREATE INDEX test_runs_batch ON test_runs(set_id, batch_key) WHERE status = 'WAITING' AND worker_id IS NULL;
      -- Every leased member, running or reserved, for the reaper.
      CREATE INDEX test_runs_leased ON test_runs(lease_expires_at) WHERE lease_expires_at IS NOT NULL;

      -- Screenshots, traces and videos: metadata here, bytes in the artifact blob
      -- store (files under the data dir) at 'location'.
      CREATE TABLE artifacts (
        id           TEXT PRIMARY KEY,
        run_id       TEXT NOT NULL REFERENCES test_runs(id),
        set_id       TEXT NOT NULL,
        name         TEXT NOT NULL,
        content_type TEXT NOT NULL,
        size         INTEGER NOT NULL,
        location     TEXT NOT NULL,
        created_at   TEXT NOT NULL
      );
      CREATE INDEX artifacts_by_set ON artifacts(set_id, run_id);
      CREATE INDEX artifacts_by_age ON artifacts(created_at);
    `,
  },
  {
    version: 4,
    name: 'idempotency keys',
    sql: `
      CREATE TABLE idempotency_keys (
        key_id     TEXT NOT NULL,
        key        TEXT NOT NULL,
        body_hash  TEXT NOT NULL,
        set_id     TEXT NOT NULL REFERENCES test_run_sets(id),
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (key_id, key)
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);
    `,
  },
  {
    version: 3,
    name: 'dashboard: set listing indexes and browser sessions',
    sql: `
      -- The dashboard lists sets newest first, optionally by environment or status,
      -- paging on (created_at, id): each filter walks its own index, no sort.
      CREATE INDEX test_run_sets_recent ON test_run_sets(created_at, id);
      CREATE INDEX test_run_sets_env_recent ON test_run_sets(env, created_at, id);
      CREATE INDEX test_run_sets_status_recent ON test_run_sets(status, created_at, id);

      -- Browser sessions, shared by every API process on the store. Only a hash of
      -- the cookie's session id is kept. expires_at is epoch milliseconds.
      CREATE TABLE sessions (
        id_hash    TEXT PRIMARY KEY,
        key_id     TEXT NOT NULL REFERENCES api_keys(id),
        csrf_token TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX sessions_expiry ON sessions(expires_at);
    `,
  },
  {
    version: 6,
    name: 'fan-out: expected durations, where members ran, duration history',
    sql: `
      -- Members are inserted longest expected first (their rowid is their claim
      -- order); expected_ms is what that order and each worker's share were
      -- computed from. ran_on: the worker that started the member's last attempt.
      ALTER TABLE test_runs ADD COLUMN expected_ms INTEGER;
      ALTER TABLE test_runs ADD COLUMN ran_on TEXT;

      -- Each test's last successful durations per environment (a JSON array, newest
      -- last, at most DURATION_SAMPLES of src/store/store.ts): their median is its
      -- expected duration. Kept apart from sets so removing old sets never loses it.
      CREATE TABLE test_durations (
        env        TEXT NOT NULL,
        name       TEXT NOT NULL,
        samples    TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (env, name)
      );
    `,
  },
  {
    version: 7,
    name: 'workers registry',
    sql: `
      -- Every live worker process, heartbeating; fan-out sizes shares from the
      -- slots of the live ones (src/scheduler/registration.ts). Times are epoch ms.
      CREATE TABLE workers (
        id           TEXT PRIMARY KEY,
        host         TEXT NOT NULL,
        pid          INTEGER NOT NULL,
        slots        INTEGER NOT NULL,
        started_at   INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 8,
    name: 'cancel and fail fast',
    sql: `
      -- maxFailures: the environment's fail-fast limit when the set was created.
      -- cancelled_*: who ended the set early (a key, or fail fast with no key) and
      -- the error its cancelled members got. Read apart from the status GET's columns.
      ALTER TABLE test_run_sets ADD COLUMN max_failures INTEGER;
      ALTER TABLE test_run_sets ADD COLUMN cancelled_at TEXT;
      ALTER TABLE test_run_sets ADD COLUMN cancelled_by TEXT;
      ALTER TABLE test_run_sets ADD COLUMN cancelled_by_name TEXT;
      ALTER TABLE test_run_sets ADD COLUMN cancel_error TEXT;
    `,
  },
  {
    version: 9,
    name: 'webhooks: set events and deliveries',
    sql: `
      -- The outbox. A set's start (it began running; a set cancelled before that
      -- has none) and end are written here by triggers, in the
      -- transaction that changes the set; a delivering process turns each into
      -- one delivery per matching webhook and deletes it.
      CREATE TABLE set_events (
        id     INTEGER PRIMARY KEY AUTOINCREMENT,
        set_id TEXT NOT NULL,
        event  TEXT NOT NULL
      );
      CREATE TRIGGER set_started_event AFTER UPDATE OF started_at ON test_run_sets
        WHEN OLD.started_at IS NULL AND NEW.started_at IS NOT NULL AND NEW.status = 'RUNNING'
        BEGIN INSERT INTO set_events (set_id, event) VALUES (NEW.id, 'set.started'); END;
      CREATE TRIGGER set_finished_event AFTER UPDATE OF status ON test_run_sets
        WHEN NEW.status IN ('SUCCESS', 'FAIL') AND OLD.status NOT IN ('SUCCESS', 'FAIL')
        BEGIN INSERT INTO set_events (set_id, event) VALUES (NEW.id, 'set.finished'); END;

      CREATE TABLE webhook_deliveries (
        id               TEXT PRIMARY KEY,
        event_id         INTEGER NOT NULL,
        webhook          TEXT NOT NULL,
        set_id           TEXT NOT NULL,
        event            TEXT NOT NULL,
        state            TEXT NOT NULL DEFAULT 'pending', -- pending | delivered | failed
        created_at       TEXT NOT NULL,
        next_attempt_at  INTEGER NOT NULL,               -- ms since the epoch
        lease_expires_at INTEGER,
        lease_token      TEXT,
        attempts         INTEGER NOT NULL DEFAULT 0,
        body             TEXT,                           -- rendered at the first attempt, sent by every one
        delivered_at     TEXT,
        UNIQUE (event_id, webhook)
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
      CREATE INDEX webhook_deliveries_by_set ON webhook_deliveries (set_id, created_at);

      CREATE TABLE webhook_attempts (
        delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
        n           INTEGER NOT NULL,
        at          TEXT NOT NULL,
        status_code INTEGER,
        error       TEXT,
        duration_ms INTEGER NOT NULL,
        PRIMARY KEY (delivery_id, n)
      );
    `,
  },
  {
    version: 10,
    name: 'key scopes: role, environments, expiry',
    sql: `
      -- Keys made before scopes keep what they could do: admin, every environment, no expiry.
      ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('read', 'trigger', 'admin'));
      -- A JSON array of environment names; NULL: every environment.
      ALTER TABLE api_keys ADD COLUMN envs TEXT;
      ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
    `,
  },
  {
    version: 11,
    name: 'set labels',
    sql: `
      -- CI context a client sent with the set (commit, branch, pipeline…), a JSON object.
      ALTER TABLE test_run_sets ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';
    `,
  },
  {
    version: 12,
    name: 'set retention',
    sql: `
      -- The retention sweep takes sets that ended before a time, oldest end first.
      -- Only ended sets have ended_at, and only they are ever removed.
      CREATE INDEX test_run_sets_ended ON test_run_sets(ended_at) WHERE ended_at IS NOT NULL;
      -- A removed set's idempotency keys go with it (the primary key is by API key).
      CREATE INDEX idempotency_keys_by_set ON idempotency_keys(set_id);
      -- Each removed member's foreign-key check looks for artifacts naming it:
      -- without this, a scan of every artifact per member.
      CREATE INDEX artifacts_by_run ON artifacts(run_id);
    `,
  },
  {
    version: 13,
    name: 'test history: members by environment, name and end',
    sql: `
      -- A member's environment is its set's, copied onto it (at insert from now on,
      -- here for the members already kept) so that one index holds a test's ended
      -- runs in one environment, newest last: the tests list walks its distinct
      -- names and takes each one's latest runs, a test's history pages backwards
      -- through it (src/store/sqlite/history.ts; plans in bench/README.md).
      ALTER TABLE test_runs ADD COLUMN env TEXT;
      UPDATE test_runs SET env = (SELECT s.env FROM test_run_sets s WHERE s.id = test_runs.set_id);
      CREATE INDEX test_runs_history ON test_runs(env, name, ended_at, id) WHERE ended_at IS NOT NULL;
    `,
  },
  {
    version: 14,
    name: 'test history: the index covers a test window',
    sql: `
      -- Migration 13's index, now also holding what each test's window of latest runs
      -- reads (all but the error, which is read for failures alone): the tests list
      -- reads 20 × 50 runs from a few index pages instead of 1,000 table rows
      -- scattered among every other test's (3 × slower at a million members than at
      -- 10,000 before, flat after: bench/README.md, bench:history).
      DROP INDEX test_runs_history;
      CREATE INDEX test_runs_history ON test_runs(env, name, ended_at, id, status, attempts, duration_ms, set_id, type)
        WHERE ended_at IS NOT NULL;
    `,
  },
  {
    version: 15,
    name: 'store settings: what serve does with no retention given',
    sql: (found) => `
      -- Facts about this store that the code reads, one row each. retention_when_unset:
      -- 'keep' on a store made before set retention existed (its history is kept until
      -- the operator sets --retention), 'default' otherwise (src/store/retention.ts).
      CREATE TABLE store_settings (
        name  TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
      INSERT INTO store_settings (name, value) VALUES ('retention_when_unset', '${retentionWhenUnset(found, SET_RETENTION)}');
    `,
  },
  {
    version: 16,
    name: 'key roles: worker',
    sql: `
      -- SQLite cannot alter a CHECK: the keys table is rebuilt with the wider one
      -- (https://sqlite.org/lang_altertable.html#otheralter), every row kept.
      -- migrateSqlite turns foreign keys off around migrations, so sessions
      -- keep naming the keys they named.
      CREATE TABLE api_keys_new (
        id           TEXT PRIMARY KEY,
        name         TEXT NOT NULL,
        hash         TEXT NOT NULL UNIQUE,
        created_at   TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at   TEXT,
        role         TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('read', 'trigger', 'admin', 'worker')),
        envs         TEXT,
        expires_at   TEXT
      );
      INSERT INTO api_keys_new (id, name, hash, created_at, last_used_at, revoked_at, role, envs, expires_at)
        SELECT id, name, hash, created_at, last_used_at, revoked_at, role, envs, expires_at FROM api_keys;
      DROP TABLE api_keys;
      ALTER TABLE api_keys_new RENAME TO api_keys;
    `,
  },
  ...LATER_MIGRATIONS,
];

/** A migration's SQL for a store that had the versions `found` before this run. */
export function sqlOf(m: SqliteMigration, found: ReadonlySet<number>): string {
  return typeof m.sql === 'string' ? m.sql : m.sql(found);
}

/**
 * Applies the migrations the store lacks, all in one immediate transaction: a
 * crash part-way leaves the store as it was, so the next start sees the same
 * versions found (what migration 15 records depends on them).
 */
export function migrateSqlite(db: Database.Database): void {
  // A migration may rebuild a table others reference (SQLite's way to change a
  // CHECK); foreign keys are off meanwhile, then checked before the commit.
  // The pragma is a no-op inside a transaction, so it is set around it.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  try {
    migrateAll(db);
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
}

function migrateAll(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const apply = db.transaction(() => {
    renumberToLadder(db, SQLITE_MIGRATIONS);
    const found = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
    const pending = SQLITE_MIGRATIONS.filter((m) => !found.has(m.version)).sort((a, b) => a.version - b.version);
    for (const m of pending) {
      db.exec(sqlOf(m, found));
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, now());
    }
    const broken = pending.length > 0 ? (db.pragma('foreign_key_check') as unknown[]) : [];
    if (broken.length > 0) throw new Error(`a migration left ${broken.length} row(s) naming rows that do not exist; nothing was applied`);
  });
  apply.immediate();
}
