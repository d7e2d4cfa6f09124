/**
 * Keeping a suite cache within its size: the least recently used unpacked
 * versions and dependency folders go first. A use is the folder's mtime (set
 * on every ensure, by whichever process sharing the cache used it). An entry
 * is removed by first renaming it out of sight (atomic: another process either
 * finds it whole or not at all), then deleting it.
 */
import { randomUUID } from 'node:crypto';
import { lstat, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** One cached folder: a version (versions/<id>) or a lockfile's dependencies (deps/<hash>). */
export interface CacheEntry {
  kind: 'versions' | 'deps';
  name: string;
  dir: string;
  /** Last use, ms since the epoch. */
  usedAt: number;
  bytes: number;
}

/** Bytes a folder takes (its files' sizes; links counted as themselves, never followed). */
export async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0; // removed meanwhile
  }
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await folderBytes(file);
    else total += await lstat(file).then((s) => s.size, () => 0);
  }
  return total;
}

/** Every version and dependency folder in the cache, with its last use and size (sizes remembered in `sizes`, by folder). */
export async function listEntries(root: string, sizes: Map<string, number>): Promise<CacheEntry[]> {
  const found: CacheEntry[] = [];
  for (const kind of ['versions', 'deps'] as const) {
    const names = await readdir(path.join(root, kind)).catch(() => [] as string[]);
    for (const name of names) {
      const dir = path.join(root, kind, name);
      const info = await lstat(dir).catch(() => undefined);
      if (!info?.isDirectory()) continue;
      let bytes = sizes.get(dir);
      if (bytes === undefined) sizes.set(dir, (bytes = await folderBytes(dir)));
      found.push({ kind, name, dir, usedAt: info.mtimeMs, bytes });
    }
  }
  return found;
}

/**
 * Which entries go so that the rest fit in `maxBytes`: least recently used
 * first, never one `kept` says is in use.
 */
export function chooseEvictions(entries: readonly CacheEntry[], maxBytes: number, kept: (entry: CacheEntry) => boolean): CacheEntry[] {
  let total = entries.reduce((sum, e) => sum + e.bytes, 0);
  const gone: CacheEntry[] = [];
  for (const entry of [...entries].sort((a, b) => a.usedAt - b.usedAt)) {
    if (total <= maxBytes) break;
    if (kept(entry)) continue;
    gone.push(entry);
    total -= entry.bytes;
  }
  return gone;
}

/** Removes an entry: out of sight at once (renamed into `tmp`), then deleted. */
export async function removeEntry(entry: CacheEntry, tmp: string): Promise<void> {
  const aside = path.join(tmp, `evicted-${entry.kind}-${randomUUID()}`);
  try {
    await rename(entry.dir, aside);
  } catch {
    return; // another process removed it first
  }
  await rm(aside, { recursive: true, force: true });
}
