/**
 * A scripted stand-in for the runset API (node:http on an ephemeral port), for
 * the client and trigger tests: each route answers from a script, so a test can
 * play 503s, 429s, unknown states, slow answers or a set that never ends, and
 * then assert on the requests the client made.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON; problem bodies (status >= 400) as application/problem+json. */
  body?: unknown;
  /** Sent as is, instead of `body`. */
  raw?: string;
  delayMs?: number;
  /** Drop the connection without answering: a network error for the client. */
  destroy?: boolean;
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** Answers one request; `n` counts the requests to that route, from 0. */
export type Script = (request: SeenRequest, n: number) => Reply | Promise<Reply>;

export interface Routes {
  create?: Script;
  status?: Script;
  members?: Script;
}

export interface FakeServer {
  /** The base address, ending in /api. */
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export const SET_ID = '7d1c5a2e-7f0a-4c55-9d2a-0f1e2d3c4b5a';

const live = new Set<Server>();

export function problem(status: number, code: string, detail: string, headers: Record<string, string> = {}): Reply {
  return { status, headers, body: { type: `https://runset.dev/errors/${code}`, title: code.replace(/_/g, ' '), status, detail, code } };
}

/** Serves the replies in order, then repeats the last one. */
export function sequence(...replies: Reply[]): Script {
  return (_request, n) => replies[Math.min(n, replies.length - 1)] ?? problem(500, 'internal', 'empty sequence');
}

export function statusReply(status: string, counts: Partial<Record<'WAITING' | 'RUNNING' | 'SUCCESS' | 'FAIL', number>> = {}): Reply {
  const c = { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 0, ...counts };
  const ended = status === 'SUCCESS' || status === 'FAIL';
  return {
    body: {
      id: SET_ID,
      status,
      startedAt: status === 'WAITING' ? null : '2026-01-01T10:00:00.000Z',
      endedAt: ended ? '2026-01-01T10:00:12.500Z' : null,
      createdAt: '2026-01-01T09:59:59.000Z',
      progress: { counts: c },
    },
  };
}

export function created(id = SET_ID): Reply {
  return { body: { testRunSetId: id } };
}

export interface MemberInput {
  name: string;
  status: string;
  attempts?: number;
  error?: string | null;
  output?: string | null;
  durationMs?: number | null;
  flaky?: boolean;
}

export function membersReply(members: MemberInput[]): Reply {
  return {
    body: {
      testRuns: members.map((m, i) => ({
        id: `00000000-0000-4000-8000-00000000000${i}`,
        name: m.name,
        type: 'command',
        status: m.status,
        attempts: m.attempts ?? 1,
        startedAt: '2026-01-01T10:00:00.000Z',
        endedAt: m.status === 'SUCCESS' || m.status === 'FAIL' ? '2026-01-01T10:00:01.000Z' : null,
        durationMs: m.durationMs === undefined ? 1250 : m.durationMs,
        error: m.error ?? null,
        output: m.output ?? null,
        ...(m.flaky === undefined ? {} : { flaky: m.flaky }),
        artifacts: [],
      })),
    },
  };
}

function route(method: string, path: string, routes: Routes): Script | undefined {
  if (method === 'POST' && path === '/api/v0/test-run-sets') return routes.create ?? (() => created());
  if (method === 'GET' && /^\/api\/v0\/test-run-sets\/[^/]+\/test-runs$/.test(path)) return routes.members ?? (() => problem(404, 'not_found', 'Route not found'));
  if (method === 'GET' && /^\/api\/v0\/test-run-sets\/[^/]+$/.test(path)) return routes.status ?? (() => statusReply('SUCCESS', { SUCCESS: 1 }));
  return undefined;
}

export async function startFakeServer(routes: Routes = {}): Promise<FakeServer> {
  const requests: SeenRequest[] = [];
  const counters = new Map<Script, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const seen: SeenRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, at: Date.now() };
      requests.push(seen);
      const script = route(seen.method, seen.path, routes) ?? (() => problem(404, 'not_found', 'Route not found'));
      const n = counters.get(script) ?? 0;
      counters.set(script, n + 1);
      void Promise.resolve(script(seen, n)).then(async (reply) => {
        // unref: a reply still being delayed must not keep the test process alive after close.
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs).unref());
        if (reply.destroy) {
          req.socket.destroy();
          return;
        }
        const status = reply.status ?? 200;
        const type = status >= 400 ? 'application/problem+json' : 'application/json';
        const text = reply.raw ?? JSON.stringify(reply.body ?? {});
        res.writeHead(status, { 'content-type': type, ...reply.headers });
        res.end(text);
      });
    });
  });
  live.add(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        live.delete(server);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** After-hook: fails the file that left a fake server listening (and closes it). */
export async function assertNoLeakedFakeServers(): Promise<void> {
  const left = [...live];
  for (const server of left) {
    live.delete(server);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  if (left.length > 0) throw new Error(`${left.length} fake server(s) were left listening`);
}

/** Output streams that collect text, as the trigger's `io`. */
export function collector(isTTY = false): { stdout: { write(s: string): boolean; isTTY: boolean }; stderr: { write(s: string): boolean; isTTY: boolean }; out(): string; err(): string } {
  let out = '';
  let err = '';
  return {
    stdout: { isTTY: false, write: (s: string) => ((out += s), true) },
    stderr: { isTTY, write: (s: string) => ((err += s), true) },
    out: () => out,
    err: () => err,
  };
}
