/**
 * The worker's end of GET /api/v0/worker/notices (src/api/routes/worker-notices.ts):
 * one streamed response, read line by line, each notice handed to the
 * listeners. When the stream breaks it reconnects (backing off to 5 s), and a
 * reconnection counts as a wake-up: a member that began waiting meanwhile is
 * claimed at once. A cancel missed meanwhile still stops its members at their
 * next heartbeat (their leases are gone).
 */
import type { Logger } from 'pino';
import { WORKER_PROTOCOL, WORKER_PROTOCOL_HEADER } from '../core/wire-worker.js';
import type { WorkerNotice } from '../core/wire-worker.js';

export interface NoticeListeners {
  runsWaiting: Set<() => void>;
  setCancelled: Set<(setId: string) => void>;
}

export interface NoticeStreamOptions {
  url: string;
  key: string;
  logger: Logger;
  listeners: NoticeListeners;
  closed: AbortSignal;
}

const MAX_BACKOFF_MS = 5000;

/** Keeps the stream open until `closed` aborts; resolves then. */
export async function followNotices(opts: NoticeStreamOptions): Promise<void> {
  let backoff = 100;
  let connectedBefore = false;
  while (!opts.closed.aborted) {
    try {
      const res = await fetch(`${opts.url}/v0/worker/notices`, { headers: { authorization: `Bearer ${opts.key}`, [WORKER_PROTOCOL_HEADER]: String(WORKER_PROTOCOL) }, signal: opts.closed });
      if (!res.ok || !res.body) throw new Error(`the API answered ${res.status}`);
      if (connectedBefore) opts.logger.info('notices stream reconnected');
      // A wake-up may have been missed while the stream was down (or before it first opened).
      for (const listener of opts.listeners.runsWaiting) listener();
      connectedBefore = true;
      backoff = 100;
      await readLines(res.body, (notice) => dispatch(notice, opts.listeners));
      if (!opts.closed.aborted) opts.logger.warn('notices stream ended; reconnecting');
    } catch (err) {
      if (opts.closed.aborted) return;
      opts.logger.warn({ err: (err as Error).message }, 'notices stream failed; reconnecting');
    }
    await new Promise((resolve) => setTimeout(resolve, backoff));
    backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
  }
}

function dispatch(notice: WorkerNotice, listeners: NoticeListeners): void {
  if (notice.type === 'runs-waiting') for (const listener of listeners.runsWaiting) listener();
  else if (notice.type === 'set-cancelled') for (const listener of listeners.setCancelled) listener(notice.setId);
}

async function readLines(body: ReadableStream<Uint8Array>, onNotice: (notice: WorkerNotice) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line) onNotice(JSON.parse(line) as WorkerNotice);
      newline = buffered.indexOf('\n');
    }
  }
}
