/**
 * The documentation site's pages (src/docs/site-pages.ts, read by
 * docs/.vitepress/config.mts): the sidebar lists every Markdown file of docs/
 * and the README, CHANGELOG and bench/README the docs link to, each once; the
 * rest of the repository stays out of the site; links written for the
 * repository (the README, GitHub's anchors) reach their page and heading; the
 * site's config and build stay out of git and of the npm package. The built
 * pages themselves are checked in Chromium by `npm run docs:check`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { docsPages, excludedFromSite, githubSlug, homeLink, OUTSIDE_DOCS, pageLink, siteSidebar, sitePages } from '../../src/docs/site-pages.js';
import { siteFile } from '../../src/docs/check-site.js';
import { escapeTags } from '../../src/docs/markdown.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Every Markdown file of the repository outside node_modules, dist and dot-folders, relative to the root. */
function markdownFiles(folder = ''): string[] {
  return readdirSync(path.join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith('.') || ['node_modules', 'dist'].includes(entry.name)) return [];
    const relative = folder ? `${folder}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return markdownFiles(relative);
    return entry.name.endsWith('.md') ? [relative] : [];
  });
}

test('the sidebar lists every page of docs/ and the front pages, each once', () => {
  const linked = siteSidebar(ROOT).flatMap((group) => group.items.map((item) => item.link));
  const everyPage = [...OUTSIDE_DOCS, ...markdownFiles('docs')].map(pageLink);
  assert.deepEqual([...linked].sort(), [...everyPage].sort());
  assert.equal(new Set(linked).size, linked.length);
  assert.ok(docsPages(ROOT).includes('docs/guides/configuration.md') && docsPages(ROOT).includes('docs/reference/config.md'));
  const groups = siteSidebar(ROOT).map((group) => group.text);
  assert.deepEqual(groups.slice(0, 3), ['Start', 'Guides', 'Reference']);
  for (const group of siteSidebar(ROOT)) for (const item of group.items) assert.ok(item.text.length > 0 && !item.text.includes('`'), JSON.stringify(item));
});

test('nothing else of the repository is a page: every other Markdown file matches an exclusion', () => {
  const excluded = excludedFromSite(ROOT);
  const matches = (file: string) => excluded.some((glob) => (glob.endsWith('/**') ? file.startsWith(glob.slice(0, -2)) : file === glob));
  const pages = new Set(sitePages(ROOT));
  for (const file of markdownFiles()) assert.equal(matches(file), !pages.has(file), file);
  assert.ok(excluded.includes('src/**') && excluded.includes('test/**') && excluded.includes('examples/**'));
  assert.ok(!excluded.some((glob) => glob.startsWith('docs')));
});

test('links to the README reach the home page; anchors are written as GitHub writes them', () => {
  assert.equal(pageLink('README.md'), '/');
  assert.equal(pageLink('docs/guides/ci.md'), '/docs/guides/ci');
  assert.equal(homeLink('docs/guides/ci.md', '../../README.md#walkthrough-with-curl'), '/#walkthrough-with-curl');
  assert.equal(homeLink('docs/interface.md', '../README.md'), '/');
  assert.equal(homeLink('docs/interface.md', './guides/ci.md#x'), './guides/ci.md#x');
  assert.equal(homeLink('docs/guides/ci.md', '../../bench/README.md#benchwait'), '../../bench/README.md#benchwait');
  assert.equal(homeLink('docs/ci.md', 'https://example.com/README.md'), 'https://example.com/README.md');
  assert.equal(githubSlug('bench:growth'), 'benchgrowth');
  assert.equal(githubSlug('Supported Playwright versions'), 'supported-playwright-versions');
  assert.equal(githubSlug('Vitest and Jest tests'), 'vitest-and-jest-tests');
  assert.equal(githubSlug('Metrics on and off'), 'metrics-on-and-off');
  assert.equal(githubSlug('CI: runset trigger, the GitHub Action'), 'ci-runset-trigger-the-github-action');
});

test('a generated table cell escapes "<" outside code, so the site does not read it as an element', () => {
  assert.equal(escapeTags('set <id> (read < admin), `--rerun-failed <id>`'), 'set &lt;id> (read &lt; admin), `--rerun-failed <id>`');
  assert.equal(escapeTags('``a`<b>`` <c>'), '``a`<b>`` &lt;c>');
});

test('the check serves the built site as a static host would, never outside it', () => {
  const site = path.join(ROOT, 'docs');
  assert.equal(siteFile(site, '/guides/nothing'), undefined);
  assert.equal(siteFile(site, '/guides/ci.md'), path.join(site, 'guides', 'ci.md'));
  assert.equal(siteFile(site, '/../package.json'), undefined);
  assert.equal(siteFile(site, '/%2e%2e/package.json'), undefined);
});

test('the site\'s config and build stay out of git, the Docker context and the npm package', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[]; scripts: Record<string, string> };
  assert.ok(pkg.files.includes('docs') && pkg.files.includes('!docs/.vitepress'));
  for (const script of ['docs:build', 'docs:dev', 'docs:preview', 'docs:check']) assert.ok(pkg.scripts[script], script);
  const gitignore = readFileSync(path.join(ROOT, '.gitignore'), 'utf8').split('\n');
  assert.ok(gitignore.includes('docs/.vitepress/dist/') && gitignore.includes('docs/.vitepress/cache/'));
  const dockerignore = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
  assert.ok(dockerignore.includes('docs') && dockerignore.includes('**/.vitepress/dist'));
});
