/**
 * The embedded store: one SQLite file in WAL mode, through better-sqlite3.
 *
 * better-sqlite3 is synchronous, so each operation below runs as one
 * transaction with no interleaving inside this process; the async signatures are
 * the Store interface's, shared with PostgreSQL. Wake-ups are an in-process
 * event: the embedded store serves one `runset serve` process (see the lock in
 * src/store/sqlite/lock.ts).
 */
import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type {
  ApiKeyRecord,
  ArtifactRecord,
  ClaimedRun,
  DurationSample,
  NewTestRunSet,
  RunOutcome,
  SetControl,
  TestRunRecord,
  TestRunSetRecord,
  VariableValue,
} from '../../core/types.js';
import { batchKeyOf } from '../../core/batch.js';
import type { BatchClaimRequest, BatchWorker, ClaimRequest, CreatedOnce, FinishedAndClaimed, IdempotencyClaim, LeaseRef, NewApiKey, NewWorker, NextClaim, QueueStats, ReapResult, Store, WorkerInfo, CancelRequest, CancelResult } from '../store.js';
import { migrateSqlite } from './migrations.js';
import { acquireLock } from './lock.js';
import { prepareIdempotency, type IdempotencyStatements } from './idempotency.js';
import { prepareStatements, type Statements, type SetRow, type RunRow } from './statements.js';
import { SqliteBrowse } from './browse.js';
import { settle } from './settle.js';
import { SetRowCache } from './set-cache.js';
import type { SqliteBatches } from './batches.js';
import { SqliteMoves } from './moves.js';
import { SqliteDurations } from './durations.js';
import { SqliteWorkers } from './workers.js';
import { SqliteKeys } from './keys.js';
import { prepareQueueStats } from './queue-stats.js';
import { SqliteWebhooks } from './webhooks.js';
import { SqliteHistory } from './history.js';
import { SqliteRetention } from './retention.js';
import { rowMappers } from '../rows.js';
import type { ListSetsQuery, NewSession, SessionRecord, SetPage } from '../browse.js';

/** SQLite returns timestamps as the ISO strings they were written as. */
const { toSet, toRun, toKey } = rowMappers<string>((value) => value);


export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly wake = new EventEmitter();
  /** Sets moved by the transaction under way, told to onSetChanged's listeners once it returns. */
  private readonly movedSets = new Set<string>();
  private sql!: Statements;
  private idem!: IdempotencyStatements;
  private browse!: SqliteBrowse;
  private moves!: SqliteMoves;
  private batches!: SqliteBatches;
  private durations!: SqliteDurations;
  private workers!: SqliteWorkers;
  private keys!: SqliteKeys;
  private stats!: (staleMs: number) => QueueStats;
  webhooks!: SqliteWebhooks;
  history!: SqliteHistory;
  retention!: SqliteRetention;

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
    if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
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
    this.sql = prepareStatements(this.db);
    // The owner holds the lock, so any lease in the file belongs to a process that
    // died: expire them now and the first reap gives them back (counting a lost lease).
    if (this.opts.owner) this.db.prepare('UPDATE test_runs SET lease_expires_at = 0 WHERE lease_expires_at IS NOT NULL').run();
    this.idem = prepareIdempotency(this.db);
    this.browse = new SqliteBrowse(this.db, toSet, toKey);
    this.moves = new SqliteMoves(this.db, this.sql, this.setRows, (setId) => this.setMoved(setId));
    this.batches = this.moves.batches;
    this.durations = new SqliteDurations(this.db);
    this.workers = new SqliteWorkers(this.db);
    this.keys = new SqliteKeys(this.db);
    this.stats = prepareQueueStats(this.db);
    this.webhooks = new SqliteWebhooks(this.db, this.opts.owner === true);
    this.history = new SqliteHistory(this.db);
    this.retention = new SqliteRetention(this.db, (setId) => this.setRows?.drop(setId));
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.wake.removeAllListeners();
    if (this.db.open) this.db.close();
    this.releaseLock?.();
    this.releaseLock = undefined;
    return Promise.resolve();
  }

  // Every method answers through settle(): a SQLite failure (a busy file, a full
  // disk) becomes a rejected promise, as with an asynchronous backend, never a throw.

  // ── keys (./keys.ts) ──
  createKey = (key: NewApiKey): Promise<ApiKeyRecord> => settle(() => this.keys.create(key));
  createFirstKey = (key: NewApiKey): Promise<ApiKeyRecord | undefined> => settle(() => this.keys.createFirst(key));
  listKeys = (): Promise<ApiKeyRecord[]> => settle(() => this.keys.list());
  revokeKey = (id: string): Promise<boolean> => settle(() => this.keys.revoke(id));
  findActiveKeyByHash = (hash: string): Promise<ApiKeyRecord | undefined> => settle(() => this.keys.findActive(hash));
  touchKeys = (ids: string[]): Promise<void> => settle(() => this.keys.touch(ids));

  // ── sets and members ──

  createSet(set: NewTestRunSet): Promise<void> {
    return settle(() => this.db.transaction(() => this.insertSetRows(set)).immediate());
  }

  createSetOnce(set: NewTestRunSet, idem: IdempotencyClaim): Promise<CreatedOnce> {
    const once = this.db.transaction((): CreatedOnce => {
      const now = Date.now();
      this.idem.deleteExpired.run(now);
      const earlier = this.idem.find.get(idem.keyId, idem.key, now) as { set_id: string; body_hash: string } | undefined;
      if (earlier) return { setId: earlier.set_id, bodyHash: earlier.body_hash, created: false };
      this.insertSetRows(set);
      this.idem.insert.run({ key_id: idem.keyId, key: idem.key, body_hash: idem.bodyHash, set_id: set.id, expires_at: now + idem.ttlMs });
      return { setId: set.id, bodyHash: idem.bodyHash, created: true };
    });
    return settle(() => once.immediate());
  }

  findCreatedOnce(keyId: string, key: string): Promise<{ setId: string; bodyHash: string } | undefined> {
    return settle(() => {
      const row = this.idem.find.get(keyId, key, Date.now()) as { set_id: string; body_hash: string } | undefined;
      return row && { setId: row.set_id, bodyHash: row.body_hash };
    });
  }

  private insertSetRows(set: NewTestRunSet): void {
    this.sql.insertSet.run({
      id: set.id,
      env: set.env,
      created_at: set.createdAt,
      count_waiting: set.runs.length,
      variables: JSON.stringify(set.variables),
      overrides: JSON.stringify(set.overrides),
      key_id: set.keyId,
      max_failures: set.maxFailures,
      labels: JSON.stringify(set.labels),
    });
    for (const run of set.runs) {
      this.sql.insertRun.run({
        id: run.id,
        set_id: set.id,
        env: set.env,
        position: run.position,
        name: run.spec.name,
        type: run.spec.type,
        spec: JSON.stringify(run.spec),
        batch_key: batchKeyOf(run.spec),
        expected_ms: Math.round(run.expectedMs),
      });
    }
  }

  peekSet(id: string): TestRunSetRecord | undefined {
    return this.setRows?.get(id);
  }

  getSets(ids: readonly string[]): Promise<TestRunSetRecord[]> {
    return settle(() => [...new Set(ids)].flatMap((id) => this.readSet(id) ?? []));
  }

  getSet(id: string): Promise<TestRunSetRecord | undefined> {
    return settle(() => this.readSet(id));
  }

  private readSet(id: string): TestRunSetRecord | undefined {
    const cached = this.setRows?.get(id);
    if (cached) return cached;
    const row = this.sql.getSet.get(id) as SetRow | undefined;
    if (!row) return undefined;
    return this.setRows ? this.setRows.set(toSet(row)) : toSet(row);
  }

  listRuns(setId: string): Promise<TestRunRecord[]> {
    return settle(() => (this.sql.listRuns.all(setId) as RunRow[]).map(toRun));
  }

  // ── dashboard: listing sets, overrides, sessions (./browse.ts) ──
  listSets = (query: ListSetsQuery): Promise<SetPage> => this.browse.listSets(query);
  getSetOverrides = (id: string): Promise<Record<string, VariableValue> | undefined> => this.browse.getSetOverrides(id);
  getSetLabels = (id: string): Promise<Record<string, string> | undefined> => this.browse.getSetLabels(id);
  createSession = (session: NewSession): Promise<SessionRecord> => this.browse.createSession(session);
  findSession = (idHash: string): Promise<SessionRecord | undefined> => this.browse.findSession(idHash);
  deleteSession = (idHash: string): Promise<void> => this.browse.deleteSession(idHash);

  // ── scheduling: each move one immediate transaction (./moves.ts) ──

  claimRuns(req: ClaimRequest): Promise<ClaimedRun[]> {
    return settle(() => this.db.transaction(() => this.moves.claim(req)).immediate());
  }

  finishAndClaim(lease: LeaseRef, outcome: RunOutcome, next: NextClaim): Promise<FinishedAndClaimed> {
    return settle(() =>
      this.db
        .transaction(() => ({
          finished: this.moves.finish(lease, outcome),
          started: next.start !== undefined && this.moves.begin(next.start, next.leaseMs),
          claimed: this.moves.claim(next),
        }))
        .immediate(),
    );
  }

  claimBatch(req: BatchClaimRequest): Promise<ClaimedRun[]> {
    return settle(() => this.db.transaction(() => this.batches.claimBatch(req)).immediate());
  }

  startRun(lease: LeaseRef, sinceMs = 0): Promise<boolean> {
    return settle(() => this.db.transaction(() => this.batches.startRun(lease, new Date(Date.now() - sinceMs).toISOString())).immediate());
  }

  heartbeat(lease: LeaseRef, leaseMs: number, attempts: number): Promise<boolean> {
    return settle(() => {
      const info = this.sql.heartbeat.run({
        id: lease.runId,
        worker_id: lease.workerId,
        claims: lease.claim,
        lease_expires_at: Date.now() + leaseMs,
        attempts,
      });
      return info.changes === 1;
    });
  }

  finishRun(lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    return settle(() => this.db.transaction(() => this.moves.finish(lease, outcome)).immediate());
  }

  releaseRuns(leases: LeaseRef[]): Promise<number> {
    return settle(() => {
      const released = this.db.transaction(() => this.moves.release(leases)).immediate();
      if (released > 0) this.wake.emit('waiting');
      return released;
    });
  }

  reapExpired(maxLostLeases: number): Promise<ReapResult> {
    return settle(() => {
      const result = this.db.transaction(() => this.moves.reap(maxLostLeases)).immediate();
      if (result.requeued > 0) this.wake.emit('waiting');
      return result;
    });
  }

  // ── cancel and fail fast (./cancel.ts) ──
  cancelSet(setId: string, req: CancelRequest): Promise<CancelResult> {
    return settle(() => {
      const result = this.db.transaction(() => this.moves.cancels.cancel(setId, req)).immediate();
      if (result.found && result.cancelled) this.wake.emit('cancelled', setId);
      return result;
    });
  }

  setControl = (setId: string): Promise<SetControl | null> => settle(() => this.moves.cancels.control(setId));

  onSetCancelled(listener: (setId: string) => void): () => void {
    this.wake.on('cancelled', listener);
    return () => this.wake.off('cancelled', listener);
  }

  // ── workers registry (./workers.ts) ──
  registerWorker = (worker: NewWorker): Promise<void> => settle(() => this.workers.register(worker));
  heartbeatWorker = (id: string): Promise<boolean> => settle(() => this.workers.heartbeat(id));
  removeWorker = (id: string): Promise<void> => settle(() => this.workers.remove(id));
  batchWorkers = (setId: string, batchKey: string, staleMs: number): Promise<BatchWorker[]> => settle(() => this.workers.batchWorkers(setId, batchKey, staleMs));
  listWorkers = (staleMs: number): Promise<WorkerInfo[]> => settle(() => this.workers.list(staleMs));
  queueStats = (staleMs: number): Promise<QueueStats> => settle(() => this.stats(staleMs));

  // ── duration history (./durations.ts) ──

  recordDurations(samples: readonly DurationSample[]): Promise<void> {
    return settle(() => this.durations.record(samples));
  }

  durationHistory(env: string): Promise<Map<string, number[]>> {
    return settle(() => this.durations.history(env));
  }

  waitingWork(setId: string, batchKey: string, limit: number): Promise<number[]> {
    return settle(() => this.durations.waitingWork(setId, batchKey, limit));
  }

  // ── artifacts ──

  listArtifacts(setId: string): Promise<ArtifactRecord[]> {
    return settle(() => this.batches.listArtifacts(setId));
  }

  getArtifact(id: string): Promise<ArtifactRecord | undefined> {
    return settle(() => this.batches.getArtifact(id));
  }

  deleteArtifactsBefore(before: string, limit: number): Promise<ArtifactRecord[]> {
    return settle(() => this.db.transaction(() => this.batches.deleteArtifactsBefore(before, limit)).immediate());
  }

  // ── wake-ups ──

  /**
   * Every write of sets happens in this process, inside a synchronous
   * transaction: the ids a transaction moved are told once it has returned
   * (committed), so a listener that reads finds the new state. A move that
   * rolled back costs its listeners one read that finds nothing new.
   */
  private setMoved(setId: string): void {
    if (this.movedSets.size === 0) queueMicrotask(() => this.tellSetsChanged());
    this.movedSets.add(setId);
  }

  private tellSetsChanged(): void {
    const ids = [...this.movedSets];
    this.movedSets.clear();
    for (const id of ids) this.wake.emit('changed', id);
  }

  onSetChanged(listener: (setId: string) => void): () => void {
    this.wake.on('changed', listener);
    return () => this.wake.off('changed', listener);
  }

  notifyRunsWaiting(): Promise<void> {
    this.wake.emit('waiting');
    return Promise.resolve();
  }

  onRunsWaiting(listener: () => void): () => void {
    this.wake.on('waiting', listener);
    return () => this.wake.off('waiting', listener);
  }
}
