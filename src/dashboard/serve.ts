/**
 * Serves the dashboard: the page shell at `/` (and the paths the page routes
 * itself: /sets/…, /trigger, /signin) and its built, content-hashed assets
 * under /assets/. The assets are built by src/dashboard/build.ts at `npm run
 * build`/`prepare` time and ship in dist/dashboard: nothing is built, fetched or
 * loaded from a CDN at run time.
 *
 * No page without a session: every page but /signin redirects there when the
 * session cookie is missing or dead. Assets are code without data, so they are
 * public (the sign-in page needs them); every datum comes from the API, which
 * checks the session itself. Playwright's trace viewer is served beside them
 * (./trace-viewer.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { readCookie, SESSION_COOKIE, type SessionAuthenticator } from '../auth/sessions.js';
import { traceViewerRoutes } from './trace-viewer.js';

/** dist/src/dashboard/serve.js → dist/dashboard/ */
export const DEFAULT_ASSETS_DIR = fileURLToPath(new URL('../../dashboard/', import.meta.url));

export interface DashboardManifest {
  /** File names under assets/, content-hashed. */
  js: string;
  css: string;
}

interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
};
const PAGES = ['/', '/sets/:id', '/sets/:id/runs/:runId', '/trigger', '/workers', '/suites', '/keys', '/tests', '/test', '/environments', '/environments/:name'];
const SECURITY_HEADERS = {
  // Everything is same-origin: scripts, styles, images (artifacts come from the API).
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

export interface DashboardOptions {
  sessions: SessionAuthenticator;
  assetsDir?: string;
}

export const dashboardRoutes: FastifyPluginAsync<DashboardOptions> = async (app, opts) => {
  const dir = opts.assetsDir ?? DEFAULT_ASSETS_DIR;
  const manifest = loadManifest(dir);
  const assets = manifest ? loadAssets(path.join(dir, 'assets')) : new Map<string, Asset>();
  const hide = { schema: { hide: true } };

  const page = (request: FastifyRequest, reply: FastifyReply, csrfToken: string) => {
    if (!manifest) {
      return reply.code(503).type('text/plain; charset=utf-8').send('The dashboard assets are not built: run `npm run build`.\n');
    }
    return reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-store' }).type('text/html; charset=utf-8').send(shell(manifest, csrfToken));
  };

  for (const url of PAGES) {
    app.get(url, hide, async (request, reply) => {
      const session = await opts.sessions.authenticate(readCookie(request.headers.cookie, SESSION_COOKIE));
      if (!session) return reply.header('cache-control', 'no-store').redirect(`/signin?next=${encodeURIComponent(request.url)}`, 303);
      return page(request, reply, session.csrfToken);
    });
  }
  app.get('/signin', hide, (request, reply) => page(request, reply, ''));
  app.get('/favicon.ico', hide, (_request, reply) => reply.header('cache-control', 'public, max-age=86400').code(204).send());

  app.get<{ Params: { file: string } }>('/assets/:file', hide, (request, reply) => {
    const asset = assets.get(request.params.file);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('no such asset\n');
    // Names carry a content hash: a new build has new names, so browsers may keep these for good.
    reply.headers({ 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable', vary: 'accept-encoding', 'x-content-type-options': 'nosniff' });
    if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(asset.gzipped);
    return reply.send(asset.body);
  });
  await app.register(traceViewerRoutes, { sessions: opts.sessions });
};

export function loadManifest(dir: string): DashboardManifest | undefined {
  const file = path.join(dir, 'manifest.json');
  if (!existsSync(file)) return undefined;
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as DashboardManifest;
  const safe = /^[A-Za-z0-9._-]+$/;
  if (!safe.test(manifest.js) || !safe.test(manifest.css)) throw new Error(`${file}: asset names must be plain file names`);
  return manifest;
}

/** Read once at start (the whole dashboard is some tens of KB), gzipped once, served from memory. */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    const type = CONTENT_TYPES[path.extname(name)];
    if (!type) continue;
    const body = readFileSync(path.join(dir, name));
    assets.set(name, { type, body, gzipped: gzipSync(body, { level: 9 }) });
  }
  return assets;
}

function shell(manifest: DashboardManifest, csrfToken: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${csrfToken}">
<title>runset</title>
<link rel="stylesheet" href="/assets/${manifest.css}">
<script type="module" src="/assets/${manifest.js}"></script>
</head>
<body>
<div id="app"><noscript>The runset dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;
}
