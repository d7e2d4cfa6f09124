/**
 * `npm run docs:check`: the built documentation site (docs/.vitepress/dist,
 * `npm run docs:build`) opened page by page in a real Chromium, as a reader
 * would. It fails when a page logs a console error or throws, when a request
 * fails or leaves this machine, when an internal link (page or `#anchor`) leads
 * nowhere, when a built page is missing from the sidebar or a page of the folder
 * was not built, or when the local search finds nothing for a term every reader
 * would type. It leaves screenshots of three pages and of the search beside the
 * build (docs/.vitepress/cache/check/). Not part of `npm test`: it needs the
 * built site and takes a minute.
 *
 * The Chromium is RUNSET_CHROMIUM, else /usr/lib/chromium/chromium (Debian's,
 * without its wrapper script), driven by the repository's own Playwright.
 */
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from '@playwright/test';
import { pageLink, sitePages } from './site-pages.js';

/** The repository root: dist/src/docs/check-site.js is three levels down. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SITE = path.join(ROOT, 'docs', '.vitepress', 'dist');
const SHOTS = path.join(ROOT, 'docs', '.vitepress', 'cache', 'check');
const CHROMIUM = process.env.RUNSET_CHROMIUM ?? '/usr/lib/chromium/chromium';
/** A word of the glossary that several pages explain: the search must find it. */
const SEARCH_TERM = 'heartbeat';
/** The pages photographed: the home page, a guide and a generated reference page. */
const SCREENSHOTS: ReadonlyArray<[string, string]> = [
  ['home', '/'],
  ['guide-configuration', '/docs/guides/configuration.html'],
  ['reference-config', '/docs/reference/config.html'],
];

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.png': 'image/png', '.ico': 'image/x-icon' };

/** The file a site path is served from (`/` → index.html), or undefined: what a static host would do. */
export function siteFile(site: string, urlPath: string): string | undefined {
  const decoded = decodeURIComponent(urlPath);
  const file = path.join(site, decoded.endsWith('/') ? `${decoded}index.html` : decoded);
  if (file !== site && !file.startsWith(site + path.sep)) return undefined;
  for (const candidate of [file, `${file}.html`]) if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return undefined;
}

function serve(site: string): Promise<Server> {
  const server = createServer((req, res) => {
    const file = siteFile(site, new URL(req.url ?? '/', 'http://site').pathname);
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/html' }).end(readFileSync(path.join(site, '404.html')));
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Every built page, as the site path a link names (`/docs/guides/ci.html`; the home page `/`). */
function builtPages(site: string): string[] {
  const found: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(path.join(site, folder), { withFileTypes: true })) {
      const relative = path.posix.join(folder, entry.name);
      if (entry.isDirectory() && entry.name !== 'assets') walk(relative);
      else if (entry.name.endsWith('.html') && relative !== '404.html') found.push(relative === 'index.html' ? '/' : `/${relative}`);
    }
  };
  walk('');
  return found.sort();
}

interface Visit {
  ids: Set<string>;
  links: string[];
  sidebar: string[];
}

/** The little of the DOM read in the page (the build's types have no DOM). */
type PageDocument = { querySelectorAll(selector: string): ArrayLike<{ id: string; href: string }> };

/** One page loaded: its element ids, the links it holds (absolute URLs) and its sidebar's links. */
async function visit(page: Page, url: string): Promise<Visit> {
  await page.goto(url, { waitUntil: 'networkidle' });
  const found = await page.evaluate(() => {
    const doc = (globalThis as unknown as { document: PageDocument }).document;
    return {
      ids: Array.from(doc.querySelectorAll('[id]'), (element) => element.id),
      links: Array.from(doc.querySelectorAll('a[href]'), (a) => a.href),
      sidebar: Array.from(doc.querySelectorAll('.VPSidebar a[href]'), (a) => new URL(a.href).pathname),
    };
  });
  return { ...found, ids: new Set(found.ids) };
}

/** The site's path of a page link: `.html` as built, the home page `/`. */
function builtPath(link: string): string {
  return link === '/' ? '/' : `${link}.html`;
}

async function main(): Promise<number> {
  if (!existsSync(path.join(SITE, 'index.html'))) {
    process.stderr.write(`no built site in ${path.relative(process.cwd(), SITE)}: run npm run docs:build first\n`);
    return 2;
  }
  const problems: string[] = [];
  const expected = sitePages(ROOT).map((source) => builtPath(pageLink(source))).sort();
  const built = builtPages(SITE);
  for (const missing of expected.filter((p) => !built.includes(p))) problems.push(`${missing}: a page of the folder that was not built`);
  for (const extra of built.filter((p) => !expected.includes(p))) problems.push(`${extra}: built, but no page of the folder`);

  const server = await serve(SITE);
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    let current = '';
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`${current}: console error: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`${current}: uncaught ${error.message}`));
    page.on('requestfailed', (request) => {
      // The router prefetches the chunks of linked pages; leaving the page aborts those still loading.
      if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`${current}: request failed: ${request.url()} (${request.failure()?.errorText})`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${current}: HTTP ${response.status()} for ${response.url()}`);
    });
    page.on('request', (request) => {
      if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) problems.push(`${current}: fetched from elsewhere: ${request.url()}`);
    });

    const visits = new Map<string, Visit>();
    for (const sitePath of expected) {
      current = sitePath;
      visits.set(sitePath, await visit(page, origin + sitePath));
    }
    let links = 0;
    for (const [from, { links: hrefs, sidebar }] of visits) {
      for (const missing of expected.filter((p) => !sidebar.map((s) => (s === '/' ? s : s.replace(/(\.html)?$/, '.html'))).includes(p))) {
        problems.push(`${from}: the sidebar does not list ${missing}`);
      }
      for (const href of new Set(hrefs)) {
        const url = new URL(href);
        if (url.origin !== origin) continue;
        links += 1;
        const target = url.pathname === '/' ? '/' : url.pathname.replace(/(\.html)?$/, '.html');
        const landed = visits.get(target);
        if (!landed) {
          if (!siteFile(SITE, url.pathname)) problems.push(`${from}: dead link ${url.pathname}${url.hash}`);
          continue;
        }
        const anchor = decodeURIComponent(url.hash.slice(1));
        if (anchor && !landed.ids.has(anchor)) problems.push(`${from}: link to a missing anchor ${target}${url.hash}`);
      }
    }

    mkdirSync(SHOTS, { recursive: true });
    for (const [name, sitePath] of SCREENSHOTS) {
      current = sitePath;
      await page.goto(origin + sitePath, { waitUntil: 'networkidle' });
      await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
    }
    current = 'search';
    const results = await search(page, origin);
    if (results.length === 0) problems.push(`search: nothing found for "${SEARCH_TERM}"`);
    await page.screenshot({ path: path.join(SHOTS, 'search.png') });

    process.stdout.write(`${expected.length} pages loaded in ${path.basename(CHROMIUM)}, ${links} internal links followed, search "${SEARCH_TERM}": ${results.length} results (first: ${results[0] ?? 'none'})\n`);
    process.stdout.write(`screenshots: ${path.relative(process.cwd(), SHOTS)}/{${[...SCREENSHOTS.map(([name]) => name), 'search'].join(',')}}.png\n`);
  } finally {
    await browser.close();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (problems.length > 0) process.stderr.write(`docs:check: ${problems.length} problems\n`);
  return problems.length > 0 ? 1 : 0;
}

/** The local search, used as a reader would: open it, type the term, read the titles of the results. */
async function search(page: Page, origin: string): Promise<string[]> {
  await page.goto(`${origin}/`, { waitUntil: 'networkidle' });
  await page.locator('.VPNavBarSearch button').first().click();
  await page.locator('.VPLocalSearchBox input').fill(SEARCH_TERM);
  const results = page.locator('.VPLocalSearchBox .results .result');
  await results.first().waitFor({ timeout: 10_000 }).catch(() => undefined);
  return (await results.allTextContents()).map((title) => title.replace(/\s+/g, ' ').trim());
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then((code) => (process.exitCode = code), (error: unknown) => {
    process.stderr.write(`docs:check: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
}
