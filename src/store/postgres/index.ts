/**
 * The PostgreSQL store, for many API and worker processes on many machines.
 * PostgreSQL is the coordination engine: claims are `FOR UPDATE SKIP LOCKED`
 * under a lease judged by the database's clock, wake-ups are LISTEN/NOTIFY.
 *
 * This file sequences the named operations of ./sql.ts and ./moves-sql.ts. Each member move is one
 * statement that also keeps its set's derived status and counts in step, by the
 * same rules as the SQLite store (the shared contract suite is the judge).
 */
import type pg from 'pg';
import pLimit, { type LimitFunction } from 'p-limit';
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
import { WORKER_LOST, type BatchClaimRequest, type BatchWorker, type ClaimRequest, type CreatedOnce, type FinishedAndClaimed, type IdempotencyClaim, type LeaseRef, type NewApiKey, type NewWorker, type NextClaim, type QueueStats, type ReapResult, type Store, type WorkerInfo, type CancelRequest, type CancelResult } from '../store.js';
import { createPool, withClient, withTransaction, type Queryable } from './connection.js';
import { WakeListener } from './listener.js';
import { migrate } from './migrations.js';
import * as sql from './sql.js';
import * as moves from './moves-sql.js';
import { rowMappers } from '../rows.js';
import * as idemSql from './idempotency-sql.js';
import * as browseSql from './browse-sql.js';
import * as cancelSql from './cancel-sql.js';
import * as batchSql from './sql-batch.js';
import * as durationSql from './durations-sql.js';
import { queueStats } from './queue-stats-sql.js';
import { PostgresWebhooks } from './webhooks.js';
import { PostgresHistory } from './history-sql.js';
import { PostgresRetention } from './retention.js';
import { PostgresBlobStore } from './blobs.js';
import { type ListSetsQuery, type NewSession, type SessionRecord, type SetPage } from '../browse.js';

export { StoreUnavailableError } from './connection.js';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database?…` */
  connectionString: string;
  /** Where every table lives; created if missing. Lower-case letters, digits and `_`. Default `runset`. */
  schema?: string;
  /** Pooled connections for queries (the LISTEN connection is separate). Default 10. */
  poolSize?: number;
  /** Told about connection errors the store recovers from by itself (idle client lost, LISTEN reconnecting). */
  onError?: (err: Error) => void;
}

/** At most 48 characters, so that `runset_<schema>_waiting` fits PostgreSQL's 63-byte identifiers. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly schema: string;
  private readonly pool: pg.Pool;
  private readonly names: sql.Names;
  private readonly wake: WakeListener;
  /** Member moves, one at a time: see `moveInTurn`. */
  private readonly moveLane: LimitFunction = pLimit(1);
  private closing: Promise<void> | undefined;
  readonly webhooks: PostgresWebhooks;
  readonly history: PostgresHistory;
  readonly retention: PostgresRetention;

  constructor(options: PostgresStoreOptions) {
    this.schema = options.schema ?? 'runset';
    if (!SCHEMA_NAME.test(this.schema)) {
      throw new Error(`invalid PostgreSQL schema name ${JSON.stringify(this.schema)}: use 1-48 of a-z, 0-9 and _, not starting with a digit`);
    }
    const onError = options.onError ?? (() => undefined);
    this.names = sql.namesOf(this.schema);
    this.pool = createPool({
      connectionString: options.connectionString,
      poolSize: options.poolSize ?? 10,
      applicationName: `runset:${this.schema}`,
      onError,
    });
    this.webhooks = new PostgresWebhooks(this.pool, this.names);
    this.history = new PostgresHistory(this.pool, this.names);
    this.retention = new PostgresRetention(this.pool, this.names);
    this.wake = new WakeListener({
      connectionString: options.connectionString,
      channel: this.names.channel,
      applicationName: `runset-listen:${this.schema}`,
      onError,
    });
  }

  migrate(): Promise<void> {
    return migrate(this.pool, this.schema);
  }

  /** Ends the LISTEN connection and the pool; safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.wake.close();
      await this.pool.end();
    })();
    return this.closing;
  }

  // ── keys ──

  async createKey(key: NewApiKey): Promise<ApiKeyRecord> {
    return toKey(await this.autocommit((q) => sql.insertKey(q, this.names, key)));
  }

  async createFirstKey(key: NewApiKey): Promise<ApiKeyRecord | undefined> {
    const row = await withTransaction(this.pool, (tx) => sql.insertFirstKey(tx, this.names, key));
    return row && toKey(row);
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return (await this.autocommit((q) => sql.listKeys(q, this.names))).map(toKey);
  }

  revokeKey(id: string): Promise<boolean> {
    return this.autocommit((q) => sql.revokeKey(q, this.names, id));
  }

  async findActiveKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.autocommit((q) => sql.findActiveKey(q, this.names, hash));
    return row ? toKey(row) : undefined;
  }

  async touchKeys(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.autocommit((q) => sql.touchKeys(q, this.names, ids));
  }

  // ── sets and members ──

  createSet(set: NewTestRunSet): Promise<void> {
    return withTransaction(this.pool, async (tx) => {
      await sql.insertSetWithRuns(tx, this.names, set);
    });
  }

  createSetOnce(set: NewTestRunSet, idem: IdempotencyClaim): Promise<CreatedOnce> {
    return withTransaction(this.pool, async (tx) => {
      await idemSql.deleteExpiredIdempotency(tx, this.names);
      const taken = await idemSql.takeIdempotencyKey(tx, this.names, { ...idem, setId: set.id });
      if (!taken) {
        const earlier = await idemSql.findIdempotencyKey(tx, this.names, idem.keyId, idem.key);
        if (!earlier) throw new Error('idempotency key vanished between insert and read');
        return { setId: earlier.set_id, bodyHash: earlier.body_hash, created: false };
      }
      await sql.insertSetWithRuns(tx, this.names, set);
      return { setId: set.id, bodyHash: idem.bodyHash, created: true };
    });
  }

  async findCreatedOnce(keyId: string, key: string): Promise<{ setId: string; bodyHash: string } | undefined> {
    const row = await this.autocommit((q) => idemSql.findIdempotencyKey(q, this.names, keyId, key));
    return row && { setId: row.set_id, bodyHash: row.body_hash };
  }

  async getSet(id: string): Promise<TestRunSetRecord | undefined> {
    const row = await this.autocommit((q) => sql.getSet(q, this.names, id));
    return row ? toSet(row) : undefined;
  }

  async getSets(ids: readonly string[]): Promise<TestRunSetRecord[]> {
    if (ids.length === 0) return [];
    return (await this.autocommit((q) => sql.getSets(q, this.names, ids))).map(toSet);
  }

  async listRuns(setId: string): Promise<TestRunRecord[]> {
    return (await this.autocommit((q) => sql.listRuns(q, this.names, setId))).map(toRun);
  }

  // ── dashboard ──

  listSets(query: ListSetsQuery): Promise<SetPage> {
    return this.autocommit((q) => browseSql.listSetsPage(q, this.names, query, toSet));
  }

  async getSetOverrides(id: string): Promise<Record<string, VariableValue> | undefined> {
    const overrides = await this.autocommit((q) => browseSql.getSetOverrides(q, this.names, id));
    return overrides as Record<string, VariableValue> | undefined;
  }

  async getSetLabels(id: string): Promise<Record<string, string> | undefined> {
    return (await this.autocommit((q) => browseSql.getSetLabels(q, this.names, id))) as Record<string, string> | undefined;
  }

  async createSession(session: NewSession): Promise<SessionRecord> {
    const row = await withTransaction(this.pool, async (tx) => {
      await browseSql.deleteExpiredSessions(tx, this.names);
      await browseSql.insertSession(tx, this.names, session);
      return browseSql.findSession(tx, this.names, session.idHash);
    });
    if (!row) throw new Error('the session vanished right after it was stored (was its key revoked?)');
    return toSession(row);
  }

  async findSession(idHash: string): Promise<SessionRecord | undefined> {
    const row = await this.autocommit((q) => browseSql.findSession(q, this.names, idHash));
    return row ? toSession(row) : undefined;
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.autocommit((q) => browseSql.deleteSession(q, this.names, idHash));
  }

  // ── scheduling ──

  // Each move below is one statement that also updates the member's set (see
  // moves-sql.ts): one round trip, with no transaction held open across the network.
  // Every move that touches a set row waits its turn in this process (moveInTurn);
  // heartbeats and the reaper do not.

  claimRuns(req: ClaimRequest): Promise<ClaimedRun[]> {
    if (req.limit <= 0) return Promise.resolve([]);
    return this.moveInTurn(async (q) => {
      const rows = await moves.claimMembers(q, this.names, req);
      return rows.map((r) => batchSql.toClaimed(r, req.workerId));
    });
  }

  async claimBatch(req: BatchClaimRequest): Promise<ClaimedRun[]> {
    if (req.limit <= 0) return [];
    const rows = await this.moveInTurn((q) => batchSql.claimBatchMembers(q, this.names, req));
    return rows.map((r) => batchSql.toClaimed(r, req.workerId));
  }

  startRun(lease: LeaseRef, sinceMs = 0): Promise<boolean> {
    return this.moveInTurn((q) => moves.startMember(q, this.names, lease, sinceMs));
  }

  heartbeat(lease: LeaseRef, leaseMs: number, attempts: number): Promise<boolean> {
    return this.autocommit((q) => moves.heartbeat(q, this.names, lease, leaseMs, attempts));
  }

  async finishRun(lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    const finished = await this.moveInTurn((q) => moves.finishMember(q, this.names, lease, outcome));
    return this.writtenBy(finished, lease, outcome);
  }

  async finishAndClaim(lease: LeaseRef, outcome: RunOutcome, next: NextClaim): Promise<FinishedAndClaimed> {
    const step = await this.moveInTurn((q) => moves.finishAndClaimMembers(q, this.names, lease, outcome, next));
    const finished = await this.writtenBy(step.finished, lease, outcome);
    return { ...step, finished, claimed: step.claimed.map((r) => batchSql.toClaimed(r, next.workerId)) };
  }

  /**
   * Whether a finish wrote its outcome: when it matched nothing, it may be a
   * retry whose first try committed (its answer lost), and then it did.
   */
  private async writtenBy(finished: boolean, lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    return finished || this.autocommit((q) => moves.holdsOutcome(q, this.names, lease, outcome));
  }

  releaseRuns(leases: LeaseRef[]): Promise<number> {
    if (leases.length === 0) return Promise.resolve(0);
    return this.moveLane(() =>
      withTransaction(this.pool, async (tx) => {
        const released = await moves.releaseMembers(tx, this.names, leases);
        if (released > 0) await sql.notifyWaiting(tx, this.names);
        return released;
      }),
    );
  }

  reapExpired(maxLostLeases: number): Promise<ReapResult> {
    return withTransaction(this.pool, async (tx) => {
      const reaped = await moves.reapMembers(tx, this.names, maxLostLeases, WORKER_LOST);
      if (reaped.requeued > 0) await sql.notifyWaiting(tx, this.names);
      return reaped;
    });
  }

  // ── workers registry ──

  async registerWorker(worker: NewWorker): Promise<void> {
    await this.autocommit((q) => durationSql.registerWorker(q, this.names, worker));
  }

  heartbeatWorker(id: string): Promise<boolean> {
    return this.autocommit((q) => durationSql.heartbeatWorker(q, this.names, id));
  }

  async removeWorker(id: string): Promise<void> {
    await this.autocommit((q) => durationSql.removeWorker(q, this.names, id));
  }

  batchWorkers(setId: string, batchKey: string, staleMs: number): Promise<BatchWorker[]> {
    return this.autocommit((q) => durationSql.batchWorkers(q, this.names, setId, batchKey, staleMs));
  }

  listWorkers(staleMs: number): Promise<WorkerInfo[]> {
    return this.autocommit((q) => durationSql.listWorkers(q, this.names, staleMs));
  }

  queueStats(staleMs: number): Promise<QueueStats> {
    return this.autocommit((q) => queueStats(q, this.names, staleMs));
  }

  // ── duration history ──

  async recordDurations(samples: readonly DurationSample[]): Promise<void> {
    if (samples.length > 0) await this.autocommit((q) => durationSql.recordDurations(q, this.names, samples));
  }

  async durationHistory(env: string): Promise<Map<string, number[]>> {
    const rows = await this.autocommit((q) => durationSql.durationHistory(q, this.names, env));
    return new Map(rows.map((r) => [r.name, r.samples]));
  }

  waitingWork(setId: string, batchKey: string, limit: number): Promise<number[]> {
    return this.autocommit((q) => durationSql.waitingWork(q, this.names, setId, batchKey, limit));
  }

  // ── artifacts ──

  async listArtifacts(setId: string): Promise<ArtifactRecord[]> {
    return (await this.autocommit((q) => batchSql.listArtifacts(q, this.names, setId))).map(toArtifact);
  }

  async getArtifact(id: string): Promise<ArtifactRecord | undefined> {
    const row = await this.autocommit((q) => batchSql.getArtifact(q, this.names, id));
    return row ? toArtifact(row) : undefined;
  }

  async deleteArtifactsBefore(before: string, limit: number): Promise<ArtifactRecord[]> {
    return (await this.autocommit((q) => batchSql.deleteOldArtifacts(q, this.names, before, limit))).map(toArtifact);
  }

  /** Artifact bytes in this database (chunked), so every API process can serve what any worker wrote. */
  artifactBlobs(maxBytes?: number): PostgresBlobStore {
    return new PostgresBlobStore(this.pool, this.names, maxBytes);
  }

  // ── cancel and fail fast (./cancel-sql.ts) ──

  cancelSet(setId: string, req: CancelRequest): Promise<CancelResult> {
    return withTransaction(this.pool, async (tx) => {
      const { found, ended } = await cancelSql.cancelMembers(tx, this.names, setId, req.error);
      if (!found) return { found: false };
      // No unfinished member: the set had ended (its status follows its members).
      if (ended === 0) return { found: true, cancelled: false };
      await cancelSql.markCancelled(tx, this.names, setId, req);
      return { found: true, cancelled: true };
    });
  }

  setControl(setId: string): Promise<SetControl | null> {
    return this.autocommit((q) => cancelSql.setControl(q, this.names, setId));
  }

  onSetCancelled(listener: (setId: string) => void): () => void {
    return this.wake.subscribe((payload) => {
      if (payload.startsWith(cancelSql.CANCEL_PAYLOAD)) listener(payload.slice(cancelSql.CANCEL_PAYLOAD.length));
    });
  }

  // ── wake-ups ──

  async notifyRunsWaiting(): Promise<void> {
    await this.autocommit((q) => sql.notifyWaiting(q, this.names));
  }

  onRunsWaiting(listener: () => void): () => void {
    // Every notification may mean work (a cancel frees slots too), and a reconnect ('') may have missed some.
    return this.wake.subscribe(() => listener());
  }

  // ── internals ──

  /** One statement on a pooled client (autocommit). */
  private autocommit<T>(op: (q: Queryable) => Promise<T>): Promise<T> {
    return withClient(this.pool, (client) => op(client));
  }

  /**
   * One member move, after this process's earlier ones have ended. A move locks
   * its set's row until it commits, so two moves on one set take turns in the
   * database anyway. Waiting there costs PostgreSQL CPU, though: with two worker
   * slots finishing members of one set, its backends spent 0.8–1.0 ms of CPU per
   * member, against 0.35 ms with the moves taking turns here (bench/README.md,
   * bench:dispatch). A move that fails does not hold up the next.
   */
  private moveInTurn<T>(op: (q: Queryable) => Promise<T>): Promise<T> {
    return this.moveLane(() => this.autocommit(op));
  }
}

/** PostgreSQL returns timestamps as Dates. */
const { toSet, toRun, toKey, toArtifact } = rowMappers<Date>((value) => value.toISOString());

function toSession(row: browseSql.SessionRow): SessionRecord {
  return { key: toKey(row), csrfToken: row.csrf_token, expiresAt: row.session_expires_at.toISOString() };
}
