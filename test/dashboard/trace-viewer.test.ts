/**
 * A failed Playwright test's trace opens in Playwright's own trace viewer,
 * served by runset from the installed playwright-core, one click from the
 * member page: the viewer lists the failing action, every request stays on
 * 127.0.0.1, nothing breaks the viewer's Content-Security-Policy, and the
 * trace is refused without a session (404 for a key of other environments).
 * The error context opens in the browser, sandboxed. Real server, real
 * Playwright run, Debian's Chromium; skips, saying why, where it is absent.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { api, assertNoLeakedServers, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing, ensureDashboardBuilt, originOf, writeOneSpecSuite } from '../helpers/dashboard.js';

const SPEC = `
import { test, expect } from '@playwright/test';
test('pay shows a receipt', async ({ page }) => {
  await page.setContent('<button>Pay</button><p id="receipt">pending</p>');
  await page.getByRole('button', { name: 'Pay' }).click();
  await expect(page.locator('#receipt')).toHaveText('paid', { timeout: 500 });
});
`;

/** The failing suite runs in `shop`; `other` is an environment a limited key may see instead. */
function writeSuite(): string {
  const config = 'environments:\n  shop: { variables: {} }\n  other: { variables: {} }\ntests:\n  - { name: shop, type: playwright, dir: suite, environments: [shop] }\n  - { name: ok, type: command, run: [node, -e, ""], environments: [other] }\n';
  return writeOneSpecSuite({ prefix: 'runset-dash-trace-', spec: SPEC, specName: 'pay.spec.ts', config });
}

interface Violation {
  document: string;
  directive: string;
  blocked: string;
}

/** Every CSP violation in every document of the context, as the page's own securitypolicyviolation events report them. */
async function recordCspViolations(context: BrowserContext): Promise<Violation[]> {
  const seen: Violation[] = [];
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) =>
      console.log('csp-violation ' + JSON.stringify({ document: location.href, directive: e.violatedDirective, blocked: e.blockedURI })));`,
  });
  context.on('console', (message) => {
    if (message.text().startsWith('csp-violation ')) seen.push(JSON.parse(message.text().slice('csp-violation '.length)) as Violation);
  });
  return seen;
}

/**
 * What the viewer tries and is refused without losing anything (src/dashboard/trace-viewer.ts):
 * index.html's inline script, which only explains file://, and the inline style of the blank
 * data: frame shown before a snapshot, which only picks its background colour.
 */
const BLOCKED_ON_PURPOSE: Array<(v: Violation) => boolean> = [
  (v) => v.directive === 'script-src-elem' && v.blocked === 'inline' && /\/trace-viewer\/index\.html/.test(v.document),
  (v) => v.directive === 'style-src-elem' && v.blocked === 'inline' && v.document.startsWith('data:text/html'),
];

const skip = chromiumMissing();
if (skip) console.log(`trace viewer tests skipped: ${skip}`);

describe('dashboard: a trace in Playwright\'s viewer', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let origin: string;
  let setId: string;

  before(async () => {
    await ensureDashboardBuilt();
    server = await startRunset({ configPath: writeSuite(), args: ['--workers', '1'] });
    origin = originOf(server.url);
    setId = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'shop' } })).body.testRunSetId as string;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
    assert.equal((await waitForSet(server, setId, 90_000)).status, 'FAIL');
  });
  after(async () => {
    await browser?.close();
    assert.equal(await server?.stop(), 0);
    assertNoLeakedServers();
  });

  async function signedIn(key: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ baseURL: origin });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto('/signin');
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Test Run Sets' }).waitFor();
    return { context, page };
  }

  async function openMember(page: Page): Promise<void> {
    await page.goto(`/sets/${setId}`);
    // The members table's link: the failures section above it links the same member.
    await page.locator('table.members-table').getByRole('link', { name: /pay shows a receipt/ }).click();
    await page.getByRole('heading', { name: /pay shows a receipt/ }).waitFor();
  }

  test('Open trace shows the failing action, with nothing fetched from elsewhere and no CSP violation', async () => {
    const { context, page } = await signedIn(server.apiKey);
    const requests: string[] = [];
    context.on('request', (request) => requests.push(request.url()));
    const violations = await recordCspViolations(context);
    await openMember(page);
    const open = page.getByRole('link', { name: /^Open trace trace.*\.zip$/ });
    assert.equal(await open.innerText(), 'Open trace');
    await open.click();
    await page.waitForURL(/\/trace-viewer\/index\.html\?trace=%2Fapi%2Fv0%2Fartifacts%2F/);

    // The action list names the click and the expectation that failed.
    const actions = page.getByRole('tabpanel', { name: 'Actions' }).getByRole('tree');
    const failed = actions.getByRole('treeitem', { name: /^Expect "toHaveText" .*locator\('#receipt'\)/ });
    await failed.waitFor();
    await actions.getByRole('treeitem', { name: /^Click .*getByRole\('button', \{ name: 'Pay' \}\)/ }).waitFor();
    // Its DOM snapshot comes from the trace, through the viewer's service worker.
    await failed.click();
    await page.getByRole('tab', { name: 'Before' }).click();
    const receipt = page.frameLocator('iframe.snapshot-visible').locator('#receipt');
    assert.equal(await receipt.innerText(), 'pending');

    const elsewhere = requests.filter((url) => !url.startsWith(`${origin}/`) && !/^(blob|data):/.test(url));
    assert.deepEqual(elsewhere, [], 'every request stays on the runset server');
    assert.ok(requests.some((url) => url.startsWith(`${origin}/api/v0/artifacts/`)), 'the viewer fetched the trace from the artifact route');
    assert.deepEqual(violations.filter((v) => !BLOCKED_ON_PURPOSE.some((known) => known(v))), []);
    await context.close();
  });

  test('a trace= naming another origin is never fetched: the viewer\'s service worker is bound by connect-src \'self\'', async () => {
    let hits = 0;
    const elsewhere = createServer((_request, response) => {
      hits++;
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    try {
      const { context, page } = await signedIn(server.apiKey);
      const foreign = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/trace.zip`;
      await page.goto(`/trace-viewer/index.html?trace=${encodeURIComponent(foreign)}`);
      await page.getByText(`Could not load trace from ${foreign}`).waitFor();
      assert.equal(hits, 0);
      await context.close();
    } finally {
      elsewhere.close();
    }
  });

  test('Open error context shows Playwright\'s markdown as text, sandboxed', async () => {
    const { context, page } = await signedIn(server.apiKey);
    await openMember(page);
    const link = page.getByRole('link', { name: /^Open error-context.*\.md$/ });
    assert.equal(await link.innerText(), 'Open error context');
    const answer = await page.request.get((await link.getAttribute('href'))!);
    assert.equal(answer.headers()['content-type'], 'text/markdown; charset=utf-8');
    assert.match(answer.headers()['content-security-policy'] ?? '', /\bsandbox\b/);
    assert.match(answer.headers()['content-security-policy'] ?? '', /default-src 'none'/);
    assert.match(answer.headers()['content-disposition'] ?? '', /^inline;/);
    await link.click();
    await page.waitForURL(/\/api\/v0\/artifacts\//);
    // Chromium's own text view (one <pre>), not the dashboard's page.
    assert.equal(await page.locator('#app').count(), 0);
    assert.match(await page.locator('body > pre').innerText(), /toHaveText/);
    await context.close();
  });

  test('without a session the viewer page sends to sign-in and its trace fetch is refused; a key of other environments gets 404', async () => {
    const { page: signedInPage, context: signedInContext } = await signedIn(server.apiKey);
    await openMember(signedInPage);
    const viewerUrl = (await signedInPage.getByRole('link', { name: /^Open trace trace.*\.zip$/ }).getAttribute('href'))!;
    const traceUrl = new URL(viewerUrl, origin).searchParams.get('trace')!;
    await signedInContext.close();

    const anonymous = await browser.newContext({ baseURL: origin });
    const page = await anonymous.newPage();
    await page.goto(viewerUrl);
    assert.match(page.url(), /\/signin\?next=%2Ftrace-viewer%2Findex\.html/);
    assert.equal(await page.evaluate(async (url) => (await fetch(url)).status, traceUrl), 401);
    await anonymous.close();

    const made = await api(server, 'POST', '/v0/keys', { body: { name: 'other only', role: 'read', envs: ['other'] } });
    assert.equal(made.status, 201);
    const { context, page: otherPage } = await signedIn(made.body.token as string);
    assert.equal(await otherPage.evaluate(async (url) => (await fetch(url)).status, traceUrl), 404);
    await context.close();
  });
});

after(() => assertNoLeakedServers());
