/**
 * Connections to PostgreSQL: the pool, one-client and one-transaction helpers,
 * and the line between transient failures (the server is restarting or out of
 * reach: the caller retries) and everything else (a bug or bad data: it does not).
 */
import pg from 'pg';
import { STORE_UNAVAILABLE } from '../store.js';

/** What an operation needs to run SQL: a pool client, inside or outside a transaction. */
export type Queryable = Pick<pg.PoolClient, 'query'>;

/**
 * The store could not reach PostgreSQL, or lost the connection mid-operation.
 * Callers (the worker loop) retry with backoff; `cause` is the driver's error.
 * When it interrupts a COMMIT the transaction may or may not have committed,
 * which every operation tolerates: writes are fenced, and a claim whose reply
 * was lost is reaped when its lease expires.
 */
export class StoreUnavailableError extends Error {
  readonly code = STORE_UNAVAILABLE;
  readonly transient = true;
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * SQLSTATEs and socket codes that mean "try again later", not "this is wrong".
 * 40P01/40001 are included because a retried transaction succeeds; the store's
 * lock ordering should make them impossible, but a retry is the right answer if
 * one ever happens.
 */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  '57P01', // admin_shutdown: the server is stopping or terminated our backend
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the server is starting up
  '25P03', // idle_in_transaction_session_timeout: we stalled inside a transaction (see BEGIN below)
  '08000', '08001', '08003', '08004', '08006', // connection exceptions
  '53300', // too_many_connections
  '40P01', '40001', // deadlock, serialization failure
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
]);

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A SQLSTATE is five characters; anything else came from the socket or the driver. */
function isSqlState(code: string | undefined): boolean {
  return code !== undefined && /^[0-9A-Z]{5}$/.test(code);
}

/** Transient failures after which the session itself is gone or unusable (all but deadlock and serialization failure). */
function endsSession(err: unknown): boolean {
  const code = codeOf(err);
  return isTransient(err) && code !== '40P01' && code !== '40001';
}

export function isTransient(err: unknown): boolean {
  const code = codeOf(err);
  return code !== undefined && TRANSIENT_CODES.has(code);
}

function unavailable(err: unknown): StoreUnavailableError {
  const detail = err instanceof Error ? err.message : String(err);
  return new StoreUnavailableError(`PostgreSQL is unavailable: ${detail}`, { cause: err });
}

export interface PoolOptions {
  connectionString: string;
  poolSize: number;
  applicationName: string;
  onError: (err: Error) => void;
}

export function createPool(opts: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.poolSize,
    application_name: opts.applicationName,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // An idle client whose server went away emits 'error' on the pool; without a
  // listener that would crash the process. The pool has already discarded the
  // client, so the next query simply opens a new connection.
  pool.on('error', (err) => opts.onError(err));
  return pool;
}

/**
 * Runs `fn` with one pool client. Failures to connect that are not SQL errors
 * (refused, reset, timed out, closed during startup), transient SQLSTATEs, and any
 * failure after the connection itself broke are rethrown as StoreUnavailableError.
 */
export async function withClient<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient, discard: (err: Error) => void) => Promise<T>,
): Promise<T> {
  // Using a closed store is a bug, not an outage: say so rather than look transient.
  if (pool.ending) throw new Error('the PostgreSQL store is closed');
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw isTransient(err) || !isSqlState(codeOf(err)) ? unavailable(err) : err;
  }
  // A checked-out client has no 'error' listener of its own: a socket error
  // while we hold it would be an unhandled 'error' event and kill the process.
  let broken: Error | undefined;
  const onError = (err: Error): void => {
    broken ??= err;
  };
  client.on('error', onError);
  try {
    return await fn(client, onError);
  } catch (err) {
    // A failure may have ended the session (57P01: its backend was terminated)
    // before the socket's 'error' arrives: never reuse that client.
    if (endsSession(err)) broken ??= err instanceof Error ? err : new Error(String(err));
    throw broken !== undefined || isTransient(err) ? unavailable(err) : err;
  } finally {
    client.off('error', onError);
    // Passing the error makes the pool destroy the client instead of reusing it.
    client.release(broken);
  }
}

/**
 * Opens a transaction that the server ends by itself if this process stops
 * talking inside it (frozen by SIGSTOP, a VM pause): otherwise its row locks —
 * a set's row above all — would stall every other worker until it woke up. Our
 * transactions never wait on the client for more than a few milliseconds; when
 * this fires, the connection is closed, the transaction rolled back, and the
 * caller sees a transient error. One round trip, and no startup parameter (which
 * poolers such as PgBouncer refuse).
 */
const BEGIN = "BEGIN; SET LOCAL idle_in_transaction_session_timeout = '5s'";

/** Runs `fn` inside BEGIN … COMMIT on one client; any failure rolls back. */
export function withTransaction<T>(pool: pg.Pool, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return withClient(pool, async (client, discard) => {
    await client.query(BEGIN);
    let result: T;
    try {
      result = await fn(client);
    } catch (err) {
      // A client whose ROLLBACK failed may still be inside the transaction:
      // never hand it back to the pool. (If the connection is gone, the server
      // has already rolled back.)
      await client.query('ROLLBACK').catch(discard);
      throw err;
    }
    await client.query('COMMIT');
    return result;
  });
}

/** Double-quotes an identifier (the schema name is validated too, this is belt and braces). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
