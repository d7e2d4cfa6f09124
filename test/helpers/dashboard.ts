/**
 * Helpers for the dashboard tests: make sure the built page assets are current
 * (`npx tsc -p .` alone does not run esbuild), sign in over HTTP, open a signed-in page in
 * Debian's Chromium through playwright-core, and write a one-spec Playwright suite.
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildDashboard, DIST_DASHBOARD_DIR, newestMtime, UI_SOURCE_DIR } from '../../src/dashboard/build.js';
import { CHROMIUM_ARGS } from '../../src/executors/playwright/chromium.js';
import { tempDir } from './server.js';

export const CHROMIUM = '/usr/lib/chromium/chromium';
/** The flags runset itself launches Chromium with (as root, in a container). */
export { CHROMIUM_ARGS };

/** Why browser tests cannot run here, or undefined when they can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `Debian's chromium is not installed (${CHROMIUM}); apt-get install chromium`;
}

/** Rebuilds dist/dashboard when it is missing or older than its sources (esbuild takes well under a second). */
export async function ensureDashboardBuilt(): Promise<void> {
  const manifest = path.join(DIST_DASHBOARD_DIR, 'manifest.json');
  const fresh = existsSync(manifest) && statSync(manifest).mtimeMs >= newestMtime(UI_SOURCE_DIR);
  if (!fresh) await buildDashboard();
}

export interface Session {
  cookie: string;
  csrfToken: string;
  setCookie: string;
}

/** POST /api/v0/session with a key; returns the cookie to send back and the CSRF token. */
export async function signIn(baseUrl: string, key: string, headers: Record<string, string> = {}): Promise<Session> {
  const res = await fetch(`${baseUrl}/api/v0/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ key }),
  });
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const body = (await res.json()) as { csrfToken: string };
  return { cookie: setCookie.split(';')[0]!, csrfToken: body.csrfToken, setCookie };
}

/** The server's origin (http://127.0.0.1:port) from its API URL (…/api). */
export function originOf(apiUrl: string): string {
  return apiUrl.replace(/\/api$/, '');
}

/**
 * A Playwright suite of one spec file (in `suite/`, 15 s per test) beside a
 * runset config; `config` is the runset.config.yaml, whose playwright entries
 * name `dir: suite`. Returns the config's path.
 */
export function writeOneSpecSuite(opts: { prefix: string; spec: string; specName: string; config: string }): string {
  const dir = tempDir(opts.prefix);
  mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
  // The dashboard tests open a failure's trace: they rely on the suite keeping one for every failure
  // (`retain-on-failure`); runset's own default, `on-first-retry`, traces only a retried test.
  writeFileSync(path.join(dir, 'suite', 'playwright.config.ts'), "import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: 'tests', timeout: 15_000, use: { trace: 'retain-on-failure' } });\n");
  writeFileSync(path.join(dir, 'suite', 'tests', opts.specName), opts.spec);
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, opts.config);
  return configPath;
}

/** Chromium with one page already signed in to the server (its session cookie set), 15 s per step. */
export async function openSignedIn(server: { url: string; apiKey: string }): Promise<{ browser: Browser; page: Page }> {
  const origin = originOf(server.url);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
  const context = await browser.newContext({ baseURL: origin });
  const [name, value] = (await signIn(origin, server.apiKey)).cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: origin }]);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return { browser, page };
}
