/**
 * Which files of a suite's folder go into its archive: everything, except what
 * `.gitignore` files (the root's and nested ones) and `.runsetignore` files
 * (same syntax, read after the `.gitignore` of their folder: for what git keeps
 * but a run does not need, or `!/dist/` for build output git leaves out but a
 * run serves) leave out, as git decides it (./gitignore.ts), and
 * never `node_modules` (a worker installs the dependencies itself, from the
 * lockfile) or `.git`. Links, devices, FIFOs and sockets are refused by name:
 * a link could reach outside the version, and the others are not files.
 */
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { decidingRule, parseIgnoreFile, type IgnoreRule } from './gitignore.js';
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

/** A folder an ignore file leaves out (never `node_modules` or `.git`), and the rule that does. */
export interface LeftOutFolder {
  /** Relative to the root, no trailing `/`. */
  path: string;
  rule: IgnoreRule;
}

export interface WalkedSuite {
  /** Every entry to pack, sorted by path (code unit order), folders included. */
  entries: WalkedEntry[];
  leftOut: LeftOutFolder[];
}

export async function walkSuite(root: string): Promise<WalkedSuite> {
  const walked: WalkedSuite = { entries: [], leftOut: [] };
  await walkFolder(root, '', [], walked);
  walked.entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return walked;
}

async function walkFolder(root: string, relative: string, inherited: readonly IgnoreRule[], walked: WalkedSuite): Promise<void> {
  const out = walked.entries;
  const folder = path.join(root, relative);
  const names = (await readdir(folder)).sort();
  // Lowest precedence first: the folders above, then this folder's .gitignore, then its .runsetignore.
  const rules = [...inherited];
  for (const file of IGNORE_FILES) {
    if (!names.includes(file)) continue;
    const text = await readFile(path.join(folder, file), 'utf8');
    rules.push(...parseIgnoreFile(text, relative, relative === '' ? file : `${relative}/${file}`));
  }
  for (const name of names) {
    if (NEVER.has(name)) continue;
    const inside = relative === '' ? name : `${relative}/${name}`;
    if (inside === LISTING_FILE) continue; // written by the packer, from this checkout's listing
    const absolute = path.join(folder, name);
    const stat = await lstat(absolute);
    const rule = decidingRule(rules, inside, stat.isDirectory());
    if (rule !== undefined && !rule.negative) {
      if (stat.isDirectory()) walked.leftOut.push({ path: inside, rule });
      continue; // git never enters a folder it leaves out: nothing under it can come back
    }
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
    if (entry.type === 'Directory') await walkFolder(root, inside, rules, walked);
  }
}
