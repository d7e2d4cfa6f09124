/**
 * A worker's suite cache: the versions it ran, unpacked, and their
 * dependencies, installed once per lockfile, in one folder bounded in size.
 *
 *   versions/<id>/   a version's files, exactly its archive's; `node_modules`
 *                    there is a link to ../../deps/<hash>/node_modules
 *   deps/<hash>/     `npm ci` of a lockfile with the version's npm settings
 *                    (hash: SHA-256 of both: ./deps.ts's installKey)
 *   tmp/             work under way; renamed into place when whole
 *   npm-cache/       npm's download cache
 *
 * Nothing half made is ever used: a version is unpacked (and its dependencies
 * installed) in tmp/, then renamed into place in one step. Processes may share
 * the folder: when two make the same version at once, one rename wins and the
 * other uses the winner's. In one process, callers of one version share one
 * unpack, and of one lockfile one install.
 *
 * Eviction: when the cache grows past its size, the least recently used
 * versions and dependency folders go (./eviction.ts), never one a run of this
 * process holds (`hold`), nor one used within `recentMs` (another process
 * sharing the folder may be running it).
 */
import { chmod, chown, copyFile, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestProcessPolicy } from '../executors/environment.js';
import { SUITE_ID } from '../core/suites.js';
import { messageOf, receiveArchive, unpackArchive, type FetchArchive } from './archive.js';
import { DEFAULT_INSTALL_TIMEOUT_MS, installKey, LOCKFILES, npmCi } from './deps.js';
import { NPMRC, projectNpmSettings } from './npmrc.js';
import { chooseEvictions, listEntries, removeEntry, type CacheEntry } from './eviction.js';
import { checkReachable } from './reachable.js';
import { SharedWork } from './shared-work.js';

export type { FetchArchive } from './archive.js';

/** How long fetching one archive may take. */
const FETCH_TIMEOUT_MS = 5 * 60 * 1000;
/** Entries used this recently stay, even past the size: another process sharing the cache may be running them. */
const DEFAULT_RECENT_MS = 10 * 60 * 1000;
/** Work left in tmp/ this long ago was a process that died: removed on open. */
const STALE_TMP_MS = 2 * DEFAULT_INSTALL_TIMEOUT_MS;

export interface SuiteCacheOptions {
  dir: string;
  maxBytes: number;
  fetchArchive: FetchArchive;
  /** Whom npm runs as and what it must not see: the test processes' policy. */
  policy?: TestProcessPolicy;
  installTimeoutMs?: number;
  recentMs?: number;
  /** Told of evictions and of what failed in the background. */
  log?: (message: string, detail?: Record<string, unknown>) => void;
}

export class SuiteCache {
  readonly dir: string;
  private readonly unpacks = new SharedWork<string>();
  private readonly installs = new SharedWork<void>();
  /** Versions runs of this process hold, how many runs each. */
  private readonly held = new Map<string, number>();
  /** The lockfile hash of each version this process knows of. */
  private readonly lockOf = new Map<string, string>();
  private readonly sizes = new Map<string, number>();
  private opened: Promise<void> | undefined;
  private evicting: Promise<void> = Promise.resolve();

  constructor(private readonly opts: SuiteCacheOptions) {
    this.dir = path.resolve(opts.dir);
  }

  /** Marks version `id` in use by a run until the returned function is called: it is not evicted meanwhile. */
  hold(id: string): () => void {
    this.held.set(id, (this.held.get(id) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(id) ?? 1) - 1;
      if (left > 0) this.held.set(id, left);
      else this.held.delete(id);
    };
  }

  /** The folder of version `id`, unpacked with its dependencies installed: fetched, checked and made first when absent. */
  async ensure(id: string, signal?: AbortSignal): Promise<string> {
    if (!SUITE_ID.test(id)) throw new Error(`"${id}" is not a suite version id; expected the SHA-256 of its archive (64 lowercase hex digits)`);
    await this.open();
    return this.unpacks.join(id, (shared) => this.make(id, shared), signal);
  }

  /** Waits for eviction under way (tests, shutdown). */
  settled(): Promise<void> {
    return this.evicting;
  }

  private path(...parts: string[]): string {
    return path.join(this.dir, ...parts);
  }

  private open(): Promise<void> {
    this.opened ??= (async () => {
      const user = this.opts.policy?.runAs;
      for (const sub of ['', 'versions', 'deps']) {
        await mkdir(this.path(sub), { recursive: true });
        await chmod(this.path(sub), 0o755);
      }
      await mkdir(this.path('tmp'), { recursive: true, mode: 0o711 });
      await mkdir(this.path('npm-cache'), { recursive: true, mode: 0o700 });
      if (user) {
        await checkReachable(this.dir, user);
        await chown(this.path('npm-cache'), user.uid, user.gid); // npm runs as the user; its downloads are checked against the lockfile's hashes
      }
      await this.removeStaleWork();
    })().catch((err: unknown) => {
      this.opened = undefined;
      throw new Error(`the suite cache ${this.dir} cannot be used: ${messageOf(err)}`, { cause: err });
    });
    return this.opened;
  }

  private async make(id: string, signal: AbortSignal): Promise<string> {
    const dir = this.path('versions', id);
    if (await isFolder(dir)) {
      await this.linkDeps(id, dir, signal, false);
      await touch(dir);
      return dir;
    }
    const work = await mkdtemp(this.path('tmp', 'version-'));
    const archive = `${work}.tgz`;
    try {
      await receiveArchive(id, archive, this.opts.fetchArchive, AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]));
      await unpackArchive(archive, work);
      await this.linkDeps(id, work, signal, true);
      await renameIntoPlace(work, dir);
    } catch (err) {
      await rm(work, { recursive: true, force: true });
      throw err;
    } finally {
      await rm(archive, { force: true });
    }
    await touch(dir);
    this.evictSoon();
    return dir;
  }

  /** Installs the version's dependencies when it has a lockfile (once per lockfile), and links them in when `link`. */
  private async linkDeps(id: string, versionDir: string, signal: AbortSignal, link: boolean): Promise<void> {
    const lock = await lockfileOf(versionDir);
    if (!lock) return;
    if (!(await isFile(path.join(versionDir, 'package.json')))) {
      throw new Error(`the suite version has ${lock.name} but no package.json at its root; npm ci needs both`);
    }
    const npmrc = projectNpmSettings(await readFile(path.join(versionDir, NPMRC), 'utf8').catch(() => '')).text;
    const hash = installKey(lock.bytes, npmrc);
    this.lockOf.set(id, hash);
    await this.installs.join(hash, (shared) => this.install(hash, versionDir, lock.name, npmrc, shared), signal);
    if (!link) return;
    try {
      // Relative: versions/<id> and tmp/<work> are both two folders below the cache's root.
      await symlink(path.join('..', '..', 'deps', hash, 'node_modules'), path.join(versionDir, 'node_modules'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new Error(`the suite version holds a node_modules folder at its root beside ${lock.name}; a version brings its lockfile, not its installed dependencies (runset installs them with npm ci)`);
      }
      throw err;
    }
  }

  private async install(hash: string, from: string, lockName: string, npmrc: string, signal: AbortSignal): Promise<void> {
    const dir = this.path('deps', hash);
    if (await isFolder(dir)) return touch(dir);
    const work = await mkdtemp(this.path('tmp', 'deps-'));
    try {
      await chmod(work, 0o755);
      await copyFile(path.join(from, 'package.json'), path.join(work, 'package.json'));
      await copyFile(path.join(from, lockName), path.join(work, lockName));
      // The project's npm settings (legacy-peer-deps, a registry…), never its credentials.
      if (npmrc !== '') await writeFile(path.join(work, NPMRC), npmrc, { mode: 0o644 });
      await npmCi(work, {
        policy: this.opts.policy ?? {},
        npmCache: this.path('npm-cache'),
        timeoutMs: this.opts.installTimeoutMs ?? DEFAULT_INSTALL_TIMEOUT_MS,
        signal,
      });
      // A lockfile without dependencies installs no folder: make one, so the version's link leads somewhere.
      await mkdir(path.join(work, 'node_modules'), { recursive: true, mode: 0o755 });
      await renameIntoPlace(work, dir);
    } catch (err) {
      await rm(work, { recursive: true, force: true });
      throw err;
    }
    await touch(dir);
    this.evictSoon();
  }

  /** Evicts in the background, one eviction at a time. */
  private evictSoon(): void {
    this.evicting = this.evicting
      .then(() => this.evict())
      .catch((err: unknown) => this.opts.log?.('evicting from the suite cache failed', { err: messageOf(err) }));
  }

  private async evict(): Promise<void> {
    const entries = await listEntries(this.dir, this.sizes);
    const now = Date.now();
    const heldLocks = new Set([...this.held.keys()].map((id) => this.lockOf.get(id)).filter((h) => h !== undefined));
    const inUse = (e: CacheEntry): boolean =>
      now - e.usedAt < (this.opts.recentMs ?? DEFAULT_RECENT_MS) || (e.kind === 'versions' ? this.held.has(e.name) : heldLocks.has(e.name));
    for (const entry of chooseEvictions(entries, this.opts.maxBytes, inUse)) {
      await removeEntry(entry, this.path('tmp'));
      this.sizes.delete(entry.dir);
      this.opts.log?.('evicted from the suite cache (least recently used)', { kind: entry.kind, name: entry.name, bytes: entry.bytes });
    }
  }

  private async removeStaleWork(): Promise<void> {
    const tmp = this.path('tmp');
    for (const name of await readdir(tmp)) {
      const info = await stat(path.join(tmp, name)).catch(() => undefined);
      if (info && Date.now() - info.mtimeMs > STALE_TMP_MS) await rm(path.join(tmp, name), { recursive: true, force: true });
    }
  }
}

/** The version's lockfile (npm's preference: the shrinkwrap first), or undefined. */
async function lockfileOf(dir: string): Promise<{ name: string; bytes: Buffer } | undefined> {
  for (const name of LOCKFILES) {
    const bytes = await readFile(path.join(dir, name)).catch(() => undefined);
    if (bytes) return { name, bytes };
  }
  return undefined;
}

/** Renames `work` to `dir`; when another process got there first, ours goes and theirs is used. */
async function renameIntoPlace(work: string, dir: string): Promise<void> {
  try {
    await rename(work, dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    await rm(work, { recursive: true, force: true });
  }
}

/** Marks a use (what eviction orders by). */
async function touch(dir: string): Promise<void> {
  const now = new Date();
  await utimes(dir, now, now).catch(() => undefined);
}

async function isFolder(file: string): Promise<boolean> {
  return stat(file).then((s) => s.isDirectory(), () => false);
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then((s) => s.isFile(), () => false);
}
