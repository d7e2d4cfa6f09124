/**
 * A local webhook receiver for tests: records every request (headers and raw
 * body) and answers as told — a status, or not at all (hang) to model a slow
 * receiver; can be stopped and started again on the same port.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status answered; null while the request hangs. */
  answered: number | null;
}

export class Receiver {
  readonly received: Received[] = [];
  /** What the next requests get: a status, or 'hang'. */
  answer: number | 'hang' = 204;
  private server: Server | undefined;
  private readonly hanging = new Set<ServerResponse>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = this.port): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const entry: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered: null };
        this.received.push(entry);
        if (this.answer === 'hang') {
          this.hanging.add(res);
          return;
        }
        entry.answered = this.answer;
        res.writeHead(this.answer).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    const server = this.server;
    this.server = undefined;
    server?.closeAllConnections();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Requests whose Runset-Event is `event` and that were answered 2xx. */
  delivered(event = 'set.finished'): Received[] {
    return this.received.filter((r) => r.headers['runset-event'] === event && r.answered !== null && r.answered < 300);
  }

  async until(what: string, check: () => boolean, withinMs = 20_000): Promise<void> {
    const deadline = Date.now() + withinMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received ${this.received.length} request(s)`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** A port nothing listens on right now (taken and given back). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
