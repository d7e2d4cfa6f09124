/**
 * The documentation site (VitePress): `npm run docs:build` writes it to
 * docs/.vitepress/dist, `npm run docs:dev` serves it while you edit,
 * `npm run docs:check` opens every page in Chromium. Its pages and sidebar come
 * from the folder (src/docs/site-pages.ts): every Markdown file of docs/, and the
 * README (the home page), CHANGELOG.md and bench/README.md, which the docs link to.
 * A dead link fails the build. Not in the npm package (package.json `files`).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitepress';
import { HOME_SOURCE, excludedFromSite, githubSlug, homeLink, siteSidebar } from '../../src/docs/site-pages.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sidebar = siteSidebar(ROOT);
const first = (group: string) => sidebar.find((g) => g.text === group)?.items[0]?.link ?? '/';

export default defineConfig({
  title: 'runset',
  description: 'Self-hostable service that runs end-to-end tests on demand for CI pipelines',
  // The root, so links written for the repository (README → docs/…, guides → ../../bench/README.md) resolve as they are.
  srcDir: '..',
  srcExclude: excludedFromSite(ROOT),
  rewrites: { [HOME_SOURCE]: 'index.md' },
  outDir: './.vitepress/dist',
  cacheDir: './.vitepress/cache',
  lastUpdated: false,
  // No favicon: an empty one, rather than a request for /favicon.ico that 404s in every reader's console.
  head: [['link', { rel: 'icon', href: 'data:,' }]],
  // Any other dead link fails the build; http://localhost:8080/ in the docs is the reader's own server.
  ignoreDeadLinks: 'localhostLinks',
  markdown: {
    // Anchors as GitHub writes them, so the links written for the repository reach their heading.
    anchor: { slugify: githubSlug },
    config(md) {
      // Links to the README reach the home page (VitePress would send them to a README.html that is not built).
      md.core.ruler.push('runset-home-links', (state) => {
        const from = (state.env as { relativePath?: string }).relativePath ?? '';
        for (const token of state.tokens) {
          for (const child of token.children ?? []) {
            const href = child.type === 'link_open' ? child.attrGet('href') : null;
            if (href !== null) child.attrSet('href', homeLink(from, href));
          }
        }
      });
    },
  },
  themeConfig: {
    nav: [
      { text: 'Guides', link: first('Guides') },
      { text: 'Reference', link: first('Reference') },
      { text: 'Changelog', link: '/CHANGELOG' },
    ],
    sidebar,
    // Nothing is fetched from elsewhere: the theme's font is bundled, search is local (minisearch).
    search: { provider: 'local' },
    outline: { level: [2, 3] },
  },
});
