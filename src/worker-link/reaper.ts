/**
 * Reaping expired leases in an API process while workers over HTTP are
 * attached. A worker pool reaps on its safety poll, but a worker over HTTP
 * holds no store to reap with: without this, the members of an HTTP worker
 * that died under `serve --no-workers` would stay RUNNING. Any number of
 * processes may reap at once (the store's reap is a fenced move).
 *
 * Attached = a worker protocol request came within the last `attachedMs`; an API
 * process no HTTP worker talks to pays nothing.
 */
import type { Logger } from 'pino';
import type { ReapResult } from '../store/store.js';

export interface AttachedReaperOptions {
  reap: () => Promise<ReapResult>;
  /** How often to reap while attached (the API's safety poll). */
  periodMs: number;
  /** How long after the last worker request workers count as attached (longer than their heartbeat). */
  attachedMs: number;
  logger: Logger;
}

export interface AttachedReaper {
  /** A worker request came: reap while they keep coming. */
  seen(): void;
  stop(): Promise<void>;
}

export function attachedReaper(opts: AttachedReaperOptions): AttachedReaper {
  let lastSeen = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const tick = () => {
    if (Date.now() - lastSeen > opts.attachedMs) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    running = opts.reap().then(
      (reaped) => {
        if (reaped.requeued + reaped.failed > 0) opts.logger.warn(reaped, 'reaped expired leases of workers over HTTP');
      },
      (err: unknown) => opts.logger.warn({ err }, 'reaping expired leases failed; will retry'),
    );
  };

  return {
    seen() {
      lastSeen = Date.now();
      if (timer !== undefined) return;
      timer = setInterval(tick, opts.periodMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      lastSeen = 0;
      await running;
    },
  };
}
