/**
 * Dashboard sign-in over real HTTP: the session cookie's attributes, CSRF and
 * Origin checks on cookie-authenticated writes, sign-out, a revoked key ending
 * its sessions, pages refused without a session, and the built assets.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { assertNoLeakedServers, CLI, startRunset, type RunningServer } from '../helpers/server.js';
import { ensureDashboardBuilt, originOf, signIn } from '../helpers/dashboard.js';
import { loadManifest, DEFAULT_ASSETS_DIR } from '../../src/dashboard/serve.js';
import { DASHBOARD_CONFIG, DASHBOARD_SECRET } from './dashboard-fixtures.js';

describe('dashboard sessions and pages', () => {
  let server: RunningServer;
  let base: string;

  before(async () => {
    await ensureDashboardBuilt();
    server = await startRunset({ config: DASHBOARD_CONFIG, env: { DASH_TOKEN: DASHBOARD_SECRET }, args: ['--workers', '1'] });
    base = originOf(server.url);
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    assert.ok(!server.logs().includes(server.apiKey), 'the key is never logged');
  });

  const call = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${base}${path}`, { redirect: 'manual', ...init });

  test('sign-in sets an HttpOnly, SameSite=Strict cookie; Secure behind HTTPS', async () => {
    const session = await signIn(base, server.apiKey);
    assert.match(session.setCookie, /^runset_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    assert.match(session.csrfToken, /^[A-Za-z0-9_-]{43}$/);
    const behindProxy = await signIn(base, server.apiKey, { 'x-forwarded-proto': 'https' });
    assert.match(behindProxy.setCookie, /; Secure$/);
    const info = await call('/api/v0/session', { headers: { cookie: session.cookie } });
    assert.equal(info.status, 200);
    assert.deepEqual(Object.keys((await info.json()) as object).sort(), ['csrfToken', 'expiresAt', 'key', 'operations']);
  });

  test('sign-in refuses a bad key, a bad body and another origin', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      call('/api/v0/session', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
    const unknown = await post(JSON.stringify({ key: `rs_${'A'.repeat(43)}` }));
    assert.equal(unknown.status, 401);
    assert.equal(unknown.headers.get('set-cookie'), null);
    const bad = await post(JSON.stringify({ token: server.apiKey }));
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { code: string }).code, 'invalid_body');
    const cross = await post(JSON.stringify({ key: server.apiKey }), { origin: 'https://evil.example' });
    assert.equal(cross.status, 403);
    assert.equal(((await cross.json()) as { code: string }).code, 'csrf_rejected');
    const form = await call('/api/v0/session', { method: 'POST', body: `key=${server.apiKey}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 415, 'a plain HTML form from another site cannot post here');
  });

  test('a cookie reads the API; writes need the CSRF token and this origin; Bearer needs neither', async () => {
    const { cookie, csrfToken } = await signIn(base, server.apiKey);
    assert.equal((await call('/api/v0/test-run-sets', { headers: { cookie } })).status, 200);
    const create = (headers: Record<string, string>) =>
      call('/api/v0/test-run-sets', { method: 'POST', body: JSON.stringify({ env: 'preview' }), headers: { 'content-type': 'application/json', cookie, ...headers } });
    const noToken = await create({ origin: base });
    assert.equal(noToken.status, 403);
    assert.equal(((await noToken.json()) as { code: string }).code, 'csrf_rejected');
    assert.equal((await create({ origin: base, 'x-csrf-token': 'x'.repeat(43) })).status, 403, 'a wrong token');
    assert.equal((await create({ origin: 'https://evil.example', 'x-csrf-token': csrfToken })).status, 403, 'another origin');
    assert.equal((await create({ 'sec-fetch-site': 'cross-site', 'x-csrf-token': csrfToken })).status, 403, 'cross-site without Origin');
    assert.equal((await create({ origin: base, 'x-csrf-token': csrfToken })).status, 200);
    const bearer = await call('/api/v0/test-run-sets', {
      method: 'POST',
      body: JSON.stringify({ env: 'preview' }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.apiKey}`, cookie: 'runset_session=garbage' },
    });
    assert.equal(bearer.status, 200, 'the Bearer path ignores cookies and needs no CSRF token');
    assert.equal((await call('/api/v0/test-run-sets', { headers: { cookie: 'runset_session=garbage' } })).status, 401);
  });

  test('sign-out ends the session and clears the cookie; it too needs the CSRF token', async () => {
    const { cookie, csrfToken } = await signIn(base, server.apiKey);
    const forged = await call('/api/v0/session', { method: 'DELETE', headers: { cookie, origin: base } });
    assert.equal(forged.status, 403);
    const out = await call('/api/v0/session', { method: 'DELETE', headers: { cookie, origin: base, 'x-csrf-token': csrfToken } });
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie') ?? '', /^runset_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
    assert.equal((await call('/api/v0/test-run-sets', { headers: { cookie } })).status, 401);
    assert.equal((await call('/', { headers: { cookie } })).status, 303);
  });

  test('revoking the key ends its sessions within a second', async () => {
    const made = spawnSync(process.execPath, [CLI, 'keys', 'create', '--name', 'browser', '--data-dir', server.dataDir], { encoding: 'utf8' });
    const token = made.stdout.trim();
    const { cookie } = await signIn(base, token);
    assert.equal((await call('/api/v0/environments', { headers: { cookie } })).status, 200);
    const list = spawnSync(process.execPath, [CLI, 'keys', 'list', '--json', '--data-dir', server.dataDir], { encoding: 'utf8' });
    const id = (JSON.parse(list.stdout) as Array<{ id: string; name: string }>).find((k) => k.name === 'browser')!.id;
    assert.equal(spawnSync(process.execPath, [CLI, 'keys', 'revoke', id, '--data-dir', server.dataDir]).status, 0);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await call('/api/v0/environments', { headers: { cookie } })).status, 401);
  });

  test('no page without a session: every page redirects to sign-in, which is served', async () => {
    for (const path of ['/', '/sets/00000000-0000-4000-8000-000000000000', '/sets/x/runs/y', '/trigger', '/?env=staging']) {
      const res = await call(path);
      assert.equal(res.status, 303, path);
      assert.equal(res.headers.get('location'), `/signin?next=${encodeURIComponent(path)}`);
      assert.equal(await res.text(), '', 'nothing of the page is sent');
    }
    const signin = await call('/signin');
    assert.equal(signin.status, 200);
    assert.match(signin.headers.get('content-type') ?? '', /^text\/html/);
  });

  test('with a session, pages are the shell with its CSRF token, never cached, under a strict CSP', async () => {
    const { cookie, csrfToken } = await signIn(base, server.apiKey);
    const res = await call('/sets/00000000-0000-4000-8000-000000000000', { headers: { cookie } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'; script-src 'self'/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    const html = await res.text();
    assert.ok(html.includes(`<meta name="csrf-token" content="${csrfToken}">`));
    assert.ok(!/https?:\/\//.test(html), 'no external address in the page: nothing from a CDN');
  });

  test('assets: hashed names, right types, cached for good, gzipped on request', async () => {
    const manifest = loadManifest(DEFAULT_ASSETS_DIR)!;
    const js = await call(`/assets/${manifest.js}`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(js.status, 200);
    assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(js.headers.get('content-encoding'), null);
    assert.ok(!/https?:\/\/(?!www\.w3\.org)/.test(await js.text()), 'the script loads nothing from another host');
    const css = await call(`/assets/${manifest.css}`, { headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.equal(css.headers.get('content-encoding'), 'gzip');
    assert.ok((await css.text()).includes('--accent'), 'fetch inflates it back to the stylesheet');
    assert.equal((await call('/assets/nothing.js')).status, 404);
    assert.equal((await call('/assets/..%2Fmanifest.json')).status, 404);
  });
});

after(() => assertNoLeakedServers());
