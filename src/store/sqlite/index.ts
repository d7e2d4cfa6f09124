/**
 * The embedded store: one SQLite file in WAL mode, through better-sqlite3.
 * This file composes the sub-stores (./sets.ts, ./claims.ts, ./keys.ts…, one
 * per interface of ../store.ts) over one connection and one wake-up emitter.
 *
 * better-sqlite3 is synchronous, so each operation runs as one transaction with
 * no interleaving inside this process; the async signatures are the Store
 * interface's, shared with PostgreSQL, and every sub-store answers through
 * settle(): a SQLite failure (a busy file, a full disk) becomes a rejected
 * promise, as with an asynchronous backend, never a throw. Wake-ups are an
 * in-process event: the embedded store serves one `runset serve` process (see
 * the lock in ./lock.ts).
 */
import { EventEmitter } from 'node:events';
import Database from 'better-sqlite3';
import type { Store } from '../store.js';
import { migrateSqlite } from './migrations.js';
import { acquireLock } from './lock.js';
import { makeStoreFilesPrivate } from './private-files.js';
import { SetRowCache } from './set-cache.js';
import { SetMoves } from './set-moves.js';
import { SqliteMoves } from './moves.js';
import { SqliteSets } from './sets.js';
import { SqliteSetViews } from './set-views.js';
import { SqliteKeys } from './keys.js';
import { SqliteClaims } from './claims.js';
import { SqliteWorkers } from './workers.js';
import { SqliteDurations } from './durations.js';
import { SqliteArtifacts } from './artifacts.js';
import { SqliteWebhooks } from './webhooks.js';
import { SqliteHistory } from './history.js';
import { SqliteRetention } from './retention.js';
import { SqliteSuiteVersions } from './suite-versions.js';
import { SqliteQuarantine } from './quarantine.js';

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly wake = new EventEmitter();
  // The sub-stores prepare their statements on a migrated file: made by migrate().
  sets!: SqliteSets;
  setViews!: SqliteSetViews;
  keys!: SqliteKeys;
  claims!: SqliteClaims;
  workers!: SqliteWorkers;
  durations!: SqliteDurations;
  artifacts!: SqliteArtifacts;
  webhooks!: SqliteWebhooks;
  history!: SqliteHistory;
  retention!: SqliteRetention;
  suiteVersions!: SqliteSuiteVersions;
  quarantine!: SqliteQuarantine;

  private releaseLock: (() => void) | undefined;
  /** Only in the owning process, the one writer of sets (see SetRowCache). */
  private readonly setRows: SetRowCache | undefined;

  /**
   * `owner: true` (runset serve) takes the data dir's lock: one serving process per
   * file. Others (the keys command) only read and write keys beside it.
   */
  constructor(
    readonly file: string,
    private readonly opts: { owner?: boolean } = {},
  ) {
    if (file !== ':memory:') makeStoreFilesPrivate(file);
    if (opts.owner && file !== ':memory:') this.releaseLock = acquireLock(`${file}.lock`);
    if (opts.owner || file === ':memory:') this.setRows = new SetRowCache();
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('foreign_keys = ON');
  }

  migrate(): Promise<void> {
    migrateSqlite(this.db);
    // The owner holds the lock, so any lease in the file belongs to a process that
    // died: expire them now and the first reap gives them back (counting a lost lease).
    if (this.opts.owner) this.db.prepare('UPDATE test_runs SET lease_expires_at = 0 WHERE lease_expires_at IS NOT NULL').run();
    const setMoves = new SetMoves(this.db, this.setRows, this.wake);
    this.artifacts = new SqliteArtifacts(this.db);
    this.sets = new SqliteSets(this.db, this.setRows, this.wake, setMoves.move);
    this.setViews = new SqliteSetViews(this.db);
    this.claims = new SqliteClaims(this.db, new SqliteMoves(this.db, setMoves.move, this.artifacts), this.wake);
    this.keys = new SqliteKeys(this.db);
    this.workers = new SqliteWorkers(this.db);
    this.durations = new SqliteDurations(this.db);
    this.webhooks = new SqliteWebhooks(this.db, this.opts.owner === true);
    this.history = new SqliteHistory(this.db);
    this.retention = new SqliteRetention(this.db, (setId) => this.setRows?.drop(setId));
    this.suiteVersions = new SqliteSuiteVersions(this.db);
    this.quarantine = new SqliteQuarantine(this.db);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.wake.removeAllListeners();
    if (this.db.open) this.db.close();
    this.releaseLock?.();
    this.releaseLock = undefined;
    return Promise.resolve();
  }
}
