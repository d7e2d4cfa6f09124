/**
 * The PostgreSQL store, for many API and worker processes on many machines.
 * PostgreSQL is the coordination engine: claims are `FOR UPDATE SKIP LOCKED`
 * under a lease judged by the database's clock, wake-ups are LISTEN/NOTIFY.
 *
 * This file composes the sub-stores (./sets.ts, ./claims.ts, ./keys.ts…, one
 * per interface of ../store.ts) over one pool and one LISTEN connection. Each
 * member move is one statement that also keeps its set's derived status and
 * counts in step, by the rules of src/core/ (the shared contract suite and the
 * property test are the judges).
 */
import type pg from 'pg';
import type { Store } from '../store.js';
import { createPool } from './connection.js';
import { WakeListener } from './listener.js';
import { migrate } from './migrations.js';
import { namesOf } from './statements.js';
import { PostgresSets } from './sets.js';
import { PostgresSetViews } from './set-views.js';
import { PostgresKeys } from './keys.js';
import { PostgresClaims } from './claims.js';
import { PostgresWorkers } from './workers.js';
import { PostgresDurations } from './durations.js';
import { PostgresArtifacts } from './artifacts.js';
import { PostgresWebhooks } from './webhooks.js';
import { PostgresHistory } from './history.js';
import { PostgresRetention } from './retention.js';
import { PostgresSuiteVersions } from './suite-versions.js';
import { PostgresQuarantine } from './quarantine.js';

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
  private readonly wake: WakeListener;
  private closing: Promise<void> | undefined;
  readonly sets: PostgresSets;
  readonly setViews: PostgresSetViews;
  readonly keys: PostgresKeys;
  readonly claims: PostgresClaims;
  readonly workers: PostgresWorkers;
  readonly durations: PostgresDurations;
  readonly artifacts: PostgresArtifacts;
  readonly webhooks: PostgresWebhooks;
  readonly history: PostgresHistory;
  readonly retention: PostgresRetention;
  readonly suiteVersions: PostgresSuiteVersions;
  readonly quarantine: PostgresQuarantine;

  constructor(options: PostgresStoreOptions) {
    this.schema = options.schema ?? 'runset';
    if (!SCHEMA_NAME.test(this.schema)) {
      throw new Error(`invalid PostgreSQL schema name ${JSON.stringify(this.schema)}: use 1-48 of a-z, 0-9 and _, not starting with a digit`);
    }
    const onError = options.onError ?? (() => undefined);
    const names = namesOf(this.schema);
    this.pool = createPool({
      connectionString: options.connectionString,
      poolSize: options.poolSize ?? 10,
      applicationName: `runset:${this.schema}`,
      onError,
    });
    this.wake = new WakeListener({
      connectionString: options.connectionString,
      channel: names.channel,
      applicationName: `runset-listen:${this.schema}`,
      onError,
    });
    this.sets = new PostgresSets(this.pool, names);
    this.setViews = new PostgresSetViews(this.pool, names);
    this.keys = new PostgresKeys(this.pool, names);
    this.claims = new PostgresClaims(this.pool, names, this.wake);
    this.workers = new PostgresWorkers(this.pool, names);
    this.durations = new PostgresDurations(this.pool, names);
    this.artifacts = new PostgresArtifacts(this.pool, names);
    this.webhooks = new PostgresWebhooks(this.pool, names);
    this.history = new PostgresHistory(this.pool, names);
    this.retention = new PostgresRetention(this.pool, names);
    this.suiteVersions = new PostgresSuiteVersions(this.pool, names);
    this.quarantine = new PostgresQuarantine(this.pool, names);
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
}
