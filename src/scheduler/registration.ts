/**
 * A worker process in the workers registry: registered when its pool starts,
 * heartbeating while it lives, removed when it stops. A process that dies
 * without a word drops out once it misses STALE_BEATS heartbeats. Fan-out reads
 * the live workers' hosts and slots to size each share (src/scheduler/shares.ts).
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { WorkerLink } from '../worker-link/link.js';

/** Heartbeats a worker may miss before it counts as gone. */
const STALE_BEATS = 3;

/** How long a worker heartbeating every `beatMs` may stay silent before it counts as gone. */
export function staleAfterMs(beatMs: number): number {
  return beatMs * STALE_BEATS;
}

export class WorkerRegistration {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly link: WorkerLink,
    private readonly worker: { id: string; slots: number },
    private readonly beatMs: number,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.register();
    this.timer = setInterval(() => void this.beat(), this.beatMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.link.removeWorker(this.worker.id).catch((err: unknown) => {
      this.logger.warn({ err }, 'leaving the workers registry failed; the entry goes stale by itself');
    });
  }

  private register(): Promise<void> {
    return this.link.registerWorker({ id: this.worker.id, host: hostname(), pid: process.pid, slots: this.worker.slots });
  }

  private async beat(): Promise<void> {
    try {
      // Dropped as stale (this process was frozen, or the store was away): register again.
      if (!(await this.link.heartbeatWorker(this.worker.id))) await this.register();
    } catch (err) {
      this.logger.warn({ err }, 'workers registry heartbeat failed; will retry');
    }
  }
}
