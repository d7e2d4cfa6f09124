/**
 * Folders an ignore file leaves out that the suite still names: build output
 * (`dist/`) that `.gitignore` rightly keeps out of git, but that a `webServer`
 * serves or a test runs. Packing cannot know what a run reads; it can say, at
 * push, which left-out folders the suite's configs name, and the line that
 * would bring each back, rather than let every test fail on a worker.
 *
 * Where a name is looked for: each Playwright entry's `webServer` command (from
 * the listing; it runs in its config's folder, so a folder is named there by
 * its last part) and the suite's scripts it runs (`node server.js`), the scripts of `package.json` files, `runset.config.yaml`, and
 * `*.config.*` files (Playwright's, Vite's…) of the suite. Playwright's own
 * output folders are not named: runs write them.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { SUITE_CONFIG_FILE, type SuiteListing } from '../core/suites.js';
import type { LeftOutFolder, WalkedEntry } from './walk.js';

/** A script a webServer command runs is read when it is at most this large. */
const MAX_SCRIPT_BYTES = 256 * 1024;
/** Entries counted in a left-out folder at most: enough to say how large it is, without walking a huge one. */
const MAX_COUNTED = 10_000;
/** Written by Playwright runs, so named by its config but never needed by one. */
const RUN_OUTPUT = new Set(['test-results', 'playwright-report', 'blob-report']);
const CONFIG_FILE = /(^|\/)([^/]+\.config\.[cm]?[jt]s|package\.json)$/;

/** A text that may name a folder, and what to call it in a message. */
interface Source {
  /** The folder its relative paths start from ('' for the root); undefined: unknown, a folder is named by its last part. */
  base: string | undefined;
  name: string;
  text: string;
}

/** One line per left-out folder the suite names: which and how large, why it is out, who names it, the line that brings it back. */
export async function leftOutNotes(root: string, walked: readonly WalkedEntry[], leftOut: readonly LeftOutFolder[], listing: SuiteListing | undefined): Promise<string[]> {
  const candidates = leftOut.filter((f) => !RUN_OUTPUT.has(path.posix.basename(f.path)));
  if (candidates.length === 0) return [];
  const commands = webServerCommands(listing);
  const sources = [...commands, ...(await scriptsRun(commands, walked)), ...(await configTexts(walked))];
  const notes: string[] = [];
  for (const folder of candidates) {
    const source = sources.find((s) => names(s, folder.path));
    if (!source) continue;
    const { rule } = folder;
    const include = `!/${rule.base === '' ? folder.path : folder.path.slice(rule.base.length + 1)}/`;
    const runsetignore = rule.base === '' ? '.runsetignore' : `${rule.base}/.runsetignore`;
    const size = await sizeOf(path.join(root, folder.path));
    notes.push(`${folder.path}/ (${size}) is left out by ${rule.file} line ${rule.line} ("${rule.text}") but ${source.name} names it; to upload it, add the line "${include}" to ${runsetignore}`);
  }
  return notes;
}

/** Whether `source` names `folder` (a path from the root) as a path of its own: `dist`, `./dist/x`, `"dist"`. */
function names(source: Source, folder: string): boolean {
  if (source.base !== undefined && source.base !== '' && !folder.startsWith(`${source.base}/`)) return false;
  const relative = source.base === undefined ? path.posix.basename(folder) : source.base === '' ? folder : folder.slice(source.base.length + 1);
  const escaped = relative.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w.@/-]|\\./)${escaped}($|[^\\w.-])`).test(source.text);
}

function webServerCommands(listing: SuiteListing | undefined): Source[] {
  const out: Source[] = [];
  for (const item of listing?.reports ?? []) {
    if (!('report' in item)) continue;
    const webServer = (item.report as { config?: { webServer?: { command?: unknown } } } | null)?.config?.webServer;
    if (typeof webServer?.command === 'string') out.push({ base: undefined, name: 'the webServer command', text: webServer.command });
  }
  return out;
}

/**
 * The suite's own scripts a webServer command runs (`node server.js`: a word of
 * the command that is a file of the suite, by its path's end), whose text may
 * name what the server serves. Small files only: a script, not a bundle.
 */
async function scriptsRun(commands: readonly Source[], walked: readonly WalkedEntry[]): Promise<Source[]> {
  const out: Source[] = [];
  for (const command of commands) {
    for (const word of new Set(command.text.split(/\s+/).map((w) => w.replace(/^\.\//, '')).filter((w) => /\.[cm]?[jt]s$/.test(w)))) {
      const entry = walked.find((e) => e.type === 'File' && e.size <= MAX_SCRIPT_BYTES && (e.path === word || e.path.endsWith(`/${word}`)));
      if (!entry) continue;
      out.push({ base: undefined, name: `${entry.path} (run by the webServer command)`, text: await readFile(entry.absolute, 'utf8').catch(() => '') });
    }
  }
  return out;
}

async function configTexts(walked: readonly WalkedEntry[]): Promise<Source[]> {
  const out: Source[] = [];
  for (const entry of walked) {
    if (entry.type !== 'File' || !(entry.path === SUITE_CONFIG_FILE || CONFIG_FILE.test(entry.path))) continue;
    const text = await readFile(entry.absolute, 'utf8').catch(() => '');
    const base = path.posix.dirname(entry.path);
    out.push({ base: base === '.' ? '' : base, name: entry.path, text: entry.path.endsWith('package.json') ? scriptsOf(text) : text });
  }
  return out;
}

/** A package.json's scripts, one a line (its dependencies name packages, not folders). */
function scriptsOf(text: string): string {
  try {
    const scripts = (JSON.parse(text) as { scripts?: Record<string, unknown> }).scripts ?? {};
    return Object.values(scripts).filter((v) => typeof v === 'string').join('\n');
  } catch {
    return '';
  }
}

/** `37 files, 1.2 MB`: the files under `folder` and their bytes (links not followed), counted up to MAX_COUNTED. */
async function sizeOf(folder: string): Promise<string> {
  let files = 0;
  let bytes = 0;
  const pending = [folder];
  while (pending.length > 0 && files < MAX_COUNTED) {
    const dir = pending.pop() as string;
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.isFile()) {
        files++;
        bytes += (await lstat(full).catch(() => undefined))?.size ?? 0;
      }
    }
  }
  const more = pending.length > 0 || files > MAX_COUNTED ? 'over ' : '';
  const amount = bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${(bytes / 1000).toFixed(1)} kB`;
  return `${more}${files} file${files === 1 ? '' : 's'}, ${more}${amount}`;
}
