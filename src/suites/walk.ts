/**
 * Which files of a suite's folder go into its archive: everything, except what
 * `.gitignore` files (the root's and nested ones) and `.runsetignore` files
 * (same syntax, for what git keeps but a run does not need) leave out, and
 * never `node_modules` (a worker installs the dependencies itself, from the
 * lockfile) or `.git`. Links, devices, FIFOs and sockets are refused by name:
 * a link could reach outside the version, and the others are not files.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { LISTING_FILE, MAX_SUITE_FILES } from '../core/suites.js';
import { countRefusal, entryRefusal } from './entries.js';

/** Never packed, at any depth. */
const NEVER = new Set(['node_modules', '.git']);
const IGNORE_FILES = ['.gitignore', '.runsetignore'];

/** A file or folder to pack: its path inside the archive (a folder's ends in `/`), and where it is on disk. */
export interface WalkedEntry {
  path: string;
  absolute: string;
  type: 'File' | 'Directory';
  size: number;
  executable: boolean;
}

/** A suite folder that cannot be packed; the message says which file and what to do. */
export class SuitePackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SuitePackError';
  }
}

/** An ignore file's rules, and the folder (relative to the root, '' for the root) they are relative to. */
interface Rules {
  base: string;
  rules: Ignore;
}

/** Every entry to pack, sorted by path (code unit order), folders included. */
export async function walkSuite(root: string): Promise<WalkedEntry[]> {
  const out: WalkedEntry[] = [];
  await walkFolder(root, '', [], out);
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

async function walkFolder(root: string, relative: string, inherited: readonly Rules[], out: WalkedEntry[]): Promise<void> {
  const folder = path.join(root, relative);
  const names = (await readdir(folder)).sort();
  const rules = [...inherited];
  for (const file of IGNORE_FILES) {
    if (!names.includes(file)) continue;
    const text = await readFile(path.join(folder, file), 'utf8');
    rules.push({ base: relative, rules: ignore().add(text) });
  }
  for (const name of names) {
    if (NEVER.has(name)) continue;
    const inside = relative === '' ? name : `${relative}/${name}`;
    if (inside === LISTING_FILE) continue; // written by the packer, from this checkout's listing
    const absolute = path.join(folder, name);
    const stat = await lstat(absolute);
    if (ignored(rules, inside, stat.isDirectory())) continue;
    if (stat.isSymbolicLink()) throw new SuitePackError(`${absolute} is a symbolic link; a suite holds plain files and folders only: copy what it points at into the folder, or list it in .runsetignore`);
    if (!stat.isFile() && !stat.isDirectory()) {
      const kind = stat.isFIFO() ? 'a FIFO' : stat.isSocket() ? 'a socket' : 'a device';
      throw new SuitePackError(`${absolute} is ${kind}; a suite holds plain files and folders only: remove it or list it in .runsetignore`);
    }
    const entry: WalkedEntry = stat.isDirectory()
      ? { path: `${inside}/`, absolute, type: 'Directory', size: 0, executable: true }
      : { path: inside, absolute, type: 'File', size: stat.size, executable: (stat.mode & 0o111) !== 0 };
    const refusal = entryRefusal(entry);
    if (refusal !== null) throw new SuitePackError(`${absolute}: ${refusal}; rename it or list it in .runsetignore`);
    out.push(entry);
    if (out.length > MAX_SUITE_FILES) {
      throw new SuitePackError(`${root}: ${countRefusal(out.length) ?? 'too many files'}; list what the tests do not need (build output, data, reports) in .runsetignore`);
    }
    if (entry.type === 'Directory') await walkFolder(root, inside, rules, out);
  }
}

/** Git's answer: the deepest rules that say anything about the path win; a path in an ignored folder is never reached. */
function ignored(rules: readonly Rules[], inside: string, isFolder: boolean): boolean {
  let result = false;
  for (const { base, rules: matcher } of rules) {
    const relative = base === '' ? inside : inside.slice(base.length + 1);
    const verdict = matcher.test(isFolder ? `${relative}/` : relative);
    if (verdict.ignored) result = true;
    else if (verdict.unignored) result = false;
  }
  return result;
}
