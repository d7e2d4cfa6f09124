/**
 * The documentation site's pages and sidebar, read from the folder: every
 * Markdown file under docs/ (docs/.vitepress, the site's own config, aside),
 * plus the three pages of the repository the docs link to — the README (the
 * site's home page), CHANGELOG.md and bench/README.md. docs/.vitepress/config.mts
 * builds the site from this list; a page added to docs/ is in the sidebar
 * without an edit, and test/unit/site-pages.test.ts holds the two together.
 *
 * The site's source folder is the repository's root (so the README's
 * `docs/guides/…` links and the guides' `../../bench/README.md` links resolve
 * as they do on a forge), and everything else in the root is excluded.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Pages of the root outside docs/ that the site shows, and the home page among them. */
export const OUTSIDE_DOCS = Object.freeze(['README.md', 'CHANGELOG.md', 'bench/README.md']);
export const HOME_SOURCE = 'README.md';

/** docs/'s subfolders, in sidebar order, with their titles; any other subfolder follows, titled by its name. */
const FOLDER_TITLES: ReadonlyArray<[string, string]> = [
  ['guides', 'Guides'],
  ['reference', 'Reference'],
];
/** The Markdown files straight in docs/, as a group of their own. */
const TOP_TITLE = 'Design and operations';

export interface SidebarItem {
  text: string;
  link: string;
}
export interface SidebarGroup {
  text: string;
  items: SidebarItem[];
}

/** A page's source file (relative to the root, `/` separated) → its link on the site. */
export function pageLink(source: string): string {
  return source === HOME_SOURCE ? '/' : `/${source.replace(/\.md$/, '')}`;
}

/**
 * A link written for the repository to the README (`../../README.md#walkthrough-with-curl`)
 * as a link to the site's home page, which the README is; any other link as it is.
 * `from` is the linking page's source path, relative to the root.
 */
export function homeLink(from: string, href: string): string {
  if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(href)) return href;
  const [target = '', hash] = href.split('#', 2);
  if (path.posix.normalize(path.posix.join(path.posix.dirname(from), target)) !== HOME_SOURCE) return href;
  return hash === undefined ? '/' : `/#${hash}`;
}

/** Every Markdown file of docs/, relative to the root, sorted; dot-folders (.vitepress) left out. */
export function docsPages(root: string): string[] {
  const found: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(path.join(root, folder), { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const relative = `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.md')) found.push(relative);
    }
  };
  walk('docs');
  return found.sort();
}

/** Every page the site builds, as source paths relative to the root. */
export function sitePages(root: string): string[] {
  return [...OUTSIDE_DOCS, ...docsPages(root)];
}

/**
 * What the site's source folder (the root) leaves out: every entry of the root
 * holding none of the pages, as globs for VitePress's `srcExclude`. Listed from
 * the folder, so a new top-level folder with a README never becomes a page unseen.
 */
export function excludedFromSite(root: string): string[] {
  const pages = sitePages(root);
  const excluded: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    if (entry.isDirectory()) {
      const inside = pages.filter((page) => page.startsWith(`${entry.name}/`));
      if (inside.length === 0) excluded.push(`${entry.name}/**`);
      else if (entry.name !== 'docs') excluded.push(...readdirSync(path.join(root, entry.name)).filter((name) => !inside.includes(`${entry.name}/${name}`)).map((name) => `${entry.name}/${name}`));
    } else if (entry.name.endsWith('.md') && !pages.includes(entry.name)) {
      excluded.push(entry.name);
    }
  }
  return excluded.sort();
}

/** A page's title: its first `# ` heading, without inline code's backticks; its file name if it has none. */
export function pageTitle(root: string, source: string): string {
  const heading = /^# (.+)$/m.exec(readFileSync(path.join(root, source), 'utf8'));
  return heading?.[1]?.replace(/`/g, '').trim() ?? path.basename(source, '.md');
}

/** The sidebar: the front pages, then docs/'s folders (guides, reference, any other), then docs/'s own files. */
export function siteSidebar(root: string): SidebarGroup[] {
  const item = (source: string): SidebarItem => ({ text: source === HOME_SOURCE ? 'Overview' : pageTitle(root, source), link: pageLink(source) });
  const docs = docsPages(root);
  const folders = [...new Set(docs.map((page) => page.split('/')).filter((parts) => parts.length > 2).map((parts) => parts[1] as string))];
  const known = FOLDER_TITLES.map(([folder]) => folder);
  const ordered = [...known.filter((folder) => folders.includes(folder)), ...folders.filter((folder) => !known.includes(folder)).sort()];
  const groups: SidebarGroup[] = [{ text: 'Start', items: OUTSIDE_DOCS.map(item) }];
  for (const folder of ordered) {
    const title = FOLDER_TITLES.find(([name]) => name === folder)?.[1] ?? folder.charAt(0).toUpperCase() + folder.slice(1);
    groups.push({ text: title, items: docs.filter((page) => page.startsWith(`docs/${folder}/`)).map(item) });
  }
  const top = docs.filter((page) => page.split('/').length === 2);
  if (top.length > 0) groups.push({ text: TOP_TITLE, items: top.map(item) });
  return groups;
}

/**
 * A heading's anchor as GitHub writes it (lower case; punctuation but `-` and
 * `_` dropped; each space a `-`), so the links written for the repository's
 * pages (`#benchgrowth` for "`bench:growth`") reach the same heading on the site.
 */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}
