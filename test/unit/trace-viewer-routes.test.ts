/**
 * /trace-viewer/ without a browser: the page needs a session, the files carry
 * the viewer's CSP, nothing outside the viewer's folder is served, and a
 * missing viewer says so on the page. A real SQLite store holds the session.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { createKey } from '../../src/auth/keys.js';
import { SESSION_COOKIE, SessionAuthenticator } from '../../src/auth/sessions.js';
import { loadTraceViewer, TRACE_VIEWER_CSP, traceViewerRoutes, type TraceViewerFiles } from '../../src/dashboard/trace-viewer.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../helpers/server.js';

describe('trace viewer routes', () => {
  let store: SqliteStore;
  let sessions: SessionAuthenticator;
  let cookie: string;
  const apps: FastifyInstance[] = [];

  before(async () => {
    store = new SqliteStore(path.join(tempDir(), 'runset.db'));
    await store.migrate();
    sessions = new SessionAuthenticator(store);
    const { key } = await createKey(store, 'viewer');
    cookie = `${SESSION_COOKIE}=${(await sessions.signIn(key)).sessionId}`;
  });
  after(async () => {
    for (const app of apps) await app.close();
    await store.close();
  });

  async function serve(viewer?: TraceViewerFiles): Promise<FastifyInstance> {
    const app = Fastify();
    await app.register(traceViewerRoutes, { sessions, ...(viewer ? { viewer } : {}) });
    apps.push(app);
    return app;
  }

  test('the page needs a session; with one it is the viewer, under its CSP', async () => {
    const app = await serve();
    const anonymous = await app.inject({ url: '/trace-viewer/index.html?trace=%2Fapi%2Fv0%2Fartifacts%2Fx' });
    assert.equal(anonymous.statusCode, 303);
    assert.equal(anonymous.headers.location, '/signin?next=%2Ftrace-viewer%2Findex.html%3Ftrace%3D%252Fapi%252Fv0%252Fartifacts%252Fx');
    const page = await app.inject({ url: '/trace-viewer/index.html', headers: { cookie } });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>Playwright Trace Viewer<\/title>/);
    assert.equal(page.headers['content-security-policy'], TRACE_VIEWER_CSP);
    assert.equal(page.headers['cache-control'], 'no-store');
  });

  test('the service worker and assets are served with an ETag, gzipped on request; only the viewer\'s own files', async () => {
    const app = await serve();
    const sw = await app.inject({ url: '/trace-viewer/sw.bundle.js', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(sw.statusCode, 200);
    assert.equal(sw.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(sw.headers['content-encoding'], 'gzip');
    assert.equal(sw.headers['content-security-policy'], TRACE_VIEWER_CSP);
    const again = await app.inject({ url: '/trace-viewer/sw.bundle.js', headers: { 'if-none-match': String(sw.headers.etag) } });
    assert.equal(again.statusCode, 304);
    for (const url of ['/trace-viewer/../../package.json', '/trace-viewer/%2e%2e/%2e%2e/package.json', '/trace-viewer/nope.js']) {
      assert.equal((await app.inject({ url })).statusCode, 404, url);
    }
  });

  test('a missing viewer is said on the page, not a bare 404', async () => {
    const viewer = loadTraceViewer(path.join(tempDir(), 'no-viewer-here'));
    assert.ok('problem' in viewer);
    const app = await serve(viewer);
    const page = await app.inject({ url: '/trace-viewer/index.html', headers: { cookie } });
    assert.equal(page.statusCode, 503);
    assert.match(page.body, /^The trace viewer is unavailable: playwright-core's trace viewer is not at .*no-viewer-here/);
    assert.match(page.body, /npx playwright show-trace/);
  });
});
