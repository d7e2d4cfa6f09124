/**
 * Wake-ups across processes: one dedicated LISTEN connection per store (never a
 * pooled one: a pooled client would be handed to other queries, and its LISTEN
 * would die with it), opened on the first subscription and kept until close().
 *
 * A NOTIFY sent while this connection is down is lost, so after every successful
 * LISTEN — the first one included, since a subscriber may have been told to wait
 * before the connection was ready — each subscriber is called once: it will look
 * for waiting runs itself, and nothing is missed.
 */
import pg from 'pg';
import { quoteIdent } from './connection.js';

export interface WakeListenerOptions {
  connectionString: string;
  channel: string;
  applicationName: string;
  onError: (err: Error) => void;
  /** First reconnect delay; doubles per failed attempt up to `maxBackoffMs`, with jitter. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class WakeListener {
  /** Each gets the notification's payload; '' after a (re)connect, when notifications may have been missed. */
  private readonly subscribers = new Set<(payload: string) => void>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private started = false;
  private closed = false;

  constructor(private readonly opts: WakeListenerOptions) {}

  subscribe(listener: (payload: string) => void): () => void {
    // A Set would merge two subscriptions of the same function; wrap to keep them apart.
    const entry = (payload: string): void => listener(payload);
    this.subscribers.add(entry);
    if (!this.started && !this.closed) {
      this.started = true;
      this.connect();
    }
    return () => {
      this.subscribers.delete(entry);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
    clearTimeout(this.retryTimer);
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private connect(): void {
    this.retryTimer = undefined;
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.opts.connectionString,
      application_name: this.opts.applicationName,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
    });
    this.client = client;
    let lost = false;
    const onLost = (err: Error): void => {
      if (lost) return;
      lost = true;
      this.lost(client, err);
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('LISTEN connection ended')));
    client.on('notification', (msg) => {
      if (msg.channel === this.opts.channel) this.fire(msg.payload ?? '');
    });
    this.connecting = client
      .connect()
      .then(() => client.query(`LISTEN ${quoteIdent(this.opts.channel)}`))
      .then(
        () => {
          if (this.closed || lost) return;
          this.failures = 0;
          this.fire('');
        },
        (err: unknown) => onLost(err instanceof Error ? err : new Error(String(err))),
      )
      .finally(() => {
        this.connecting = undefined;
      });
  }

  private lost(client: pg.Client, err: Error): void {
    if (this.closed) return;
    this.opts.onError(err);
    if (this.client === client) this.client = undefined;
    client.end().catch(() => undefined);
    const max = this.opts.maxBackoffMs ?? 5_000;
    const base = Math.min(max, (this.opts.minBackoffMs ?? 100) * 2 ** this.failures);
    this.failures++;
    // Jitter spreads the reconnects of many workers after one server restart.
    this.retryTimer = setTimeout(() => this.connect(), base * (0.5 + Math.random() / 2));
  }

  private fire(payload: string): void {
    for (const listener of [...this.subscribers]) {
      try {
        listener(payload);
      } catch (err) {
        this.opts.onError(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }
}
