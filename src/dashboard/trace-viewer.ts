/**
 * Playwright's own trace viewer, served by runset under /trace-viewer/ from the
 * static build that the installed playwright-core ships
 * (lib/vite/traceViewer: index.html, the service worker sw.bundle.js, assets).
 * Nothing is fetched from a CDN: the page at
 * /trace-viewer/index.html?trace=/api/v0/artifacts/<id> registers the viewer's
 * service worker (scoped to /trace-viewer/), which fetches the trace zip from
 * the artifact route on the same origin with the session cookie, so the viewer
 * needs no key and the artifact route's own checks (session, the key's
 * environments) decide what it may open.
 *
 * The page itself asks for a session (else /signin, as every dashboard page);
 * the other files are the viewer's code, without data, and public like the
 * dashboard's assets. A missing viewer is said on the page (503), not a 404.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyPluginAsync } from 'fastify';
import { readCookie, SESSION_COOKIE, type SessionAuthenticator } from '../auth/sessions.js';

export const TRACE_VIEWER_PATH = '/trace-viewer/';

/**
 * As tight as the viewer allows, found in Chromium (test/dashboard/trace-viewer.test.ts
 * fails on any other violation): its own scripts, styles and font; images from
 * itself, data: and blob: (the trace's screenshots become blob: URLs); its
 * service worker and the snapshot frames (served by that worker, which gives
 * them a CSP of its own) from itself, and data: for the blank frame it shows
 * before a snapshot (an opaque origin). connect-src 'self' also binds the
 * service worker (its script carries this header), so a `trace=` naming another
 * host cannot make it fetch from there. Refused without loss, and left so:
 * index.html's one inline script, which only explains file://, and the blank
 * frame's inline style, which only picks its background colour.
 */
export const TRACE_VIEWER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "frame-src 'self' data:",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ttf': 'font/ttf',
  '.webmanifest': 'application/manifest+json',
};

interface ViewerFile {
  type: string;
  body: Buffer;
  etag: string;
  /** Made on the first request that accepts gzip: most servers never open a trace. */
  gzipped?: Buffer;
}

export type TraceViewerFiles = { dir: string; files: Map<string, ViewerFile> } | { problem: string };

/**
 * playwright-core's viewer build: the one under runset's own @playwright/test,
 * followed dependency by dependency (@playwright/test → playwright →
 * playwright-core), since runset does not depend on playwright-core directly
 * and a strict layout (pnpm) would not let it resolve that name itself.
 */
export function findTraceViewerDir(): string | { problem: string } {
  let pkg = fileURLToPath(import.meta.url);
  try {
    for (const name of ['@playwright/test', 'playwright', 'playwright-core']) pkg = createRequire(pkg).resolve(`${name}/package.json`);
  } catch (error) {
    return { problem: `playwright-core cannot be found (${(error as Error).message.split('\n')[0]})` };
  }
  return path.join(path.dirname(pkg), 'lib', 'vite', 'traceViewer');
}

/** Reads the viewer's files once (about 1.7 MB), by their path under the viewer's folder. */
export function loadTraceViewer(dir: string | { problem: string } = findTraceViewerDir()): TraceViewerFiles {
  if (typeof dir !== 'string') return dir;
  if (!existsSync(path.join(dir, 'index.html')) || !existsSync(path.join(dir, 'sw.bundle.js'))) {
    return { problem: `playwright-core's trace viewer is not at ${dir} (index.html and sw.bundle.js expected)` };
  }
  const files = new Map<string, ViewerFile>();
  const walk = (sub: string) => {
    for (const name of readdirSync(path.join(dir, sub))) {
      const rel = sub ? `${sub}/${name}` : name;
      if (statSync(path.join(dir, rel)).isDirectory()) walk(rel);
      else {
        const type = CONTENT_TYPES[path.extname(name)];
        if (!type) continue;
        const body = readFileSync(path.join(dir, rel));
        files.set(rel, { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
      }
    }
  };
  walk('');
  return { dir, files };
}

export interface TraceViewerOptions {
  sessions: SessionAuthenticator;
  /** Default: playwright-core's, read at start. */
  viewer?: TraceViewerFiles;
}

export const traceViewerRoutes: FastifyPluginAsync<TraceViewerOptions> = (app, { sessions, viewer = loadTraceViewer() }) => {
  const hide = { schema: { hide: true } };
  const headers = { 'content-security-policy': TRACE_VIEWER_CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin' };
  if ('problem' in viewer) app.log.warn(`the trace viewer is unavailable: ${viewer.problem}`);

  app.get<{ Params: { '*': string } }>(`${TRACE_VIEWER_PATH}*`, hide, async (request, reply) => {
    const rel = request.params['*'] || 'index.html';
    if (rel === 'index.html') {
      const session = await sessions.authenticate(readCookie(request.headers.cookie, SESSION_COOKIE));
      if (!session) return reply.header('cache-control', 'no-store').redirect(`/signin?next=${encodeURIComponent(request.url)}`, 303);
    }
    if ('problem' in viewer) {
      return reply.code(503).headers(headers).header('cache-control', 'no-store').type('text/plain; charset=utf-8')
        .send(`The trace viewer is unavailable: ${viewer.problem}.\nDownload the trace from the test run's page and open it with \`npx playwright show-trace trace.zip\`.\n`);
    }
    // Only names read at start are served: a path that walks out of the folder is simply not in the map.
    const file = viewer.files.get(rel);
    if (!file) return reply.code(404).headers(headers).type('text/plain; charset=utf-8').send('no such file in the trace viewer\n');
    // Revalidated every time: the names of index.html and sw.bundle.js do not change when playwright-core does.
    reply.headers({ ...headers, 'content-type': file.type, 'cache-control': rel === 'index.html' ? 'no-store' : 'no-cache', etag: file.etag, vary: 'accept-encoding' });
    if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
    if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      file.gzipped ??= gzipSync(file.body);
      return reply.header('content-encoding', 'gzip').send(file.gzipped);
    }
    return reply.send(file.body);
  });
  return Promise.resolve();
};
