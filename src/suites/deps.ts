/**
 * A version's dependencies: `npm ci` into a folder of its own, once per
 * lockfile (versions with the same lockfile share it). Install scripts are the
 * suite's code, so npm runs as a test process does: the environment of
 * ../executors/environment.ts (no RUNSET_*, no credential of the worker) and,
 * with --run-as, as that user, in a folder handed to that user for the install
 * and taken back afterwards (so no test can change what other versions use).
 * npm's own browsers download is off (runset downloads no browser: it runs an
 * installed one, see ../executors/playwright/browser-choice.cts).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chown, lchown, readdir } from 'node:fs/promises';
import path from 'node:path';
import { testEnvironment, type TestProcessPolicy } from '../executors/environment.js';
import { killQuietly } from '../executors/process-tree.js';
import { spawnAs } from '../executors/run-as.js';

/** How long one `npm ci` may take by default: a large suite of Playwright tests installs in a few minutes from a cold cache. */
export const DEFAULT_INSTALL_TIMEOUT_MS = 10 * 60 * 1000;
/** Lines of npm's stderr an install failure carries: enough for npm's own explanation. */
const STDERR_LINES = 6;
/** Characters of those lines at most. */
const STDERR_CHARS = 2000;

/** The files at a version's root that fix its dependencies, in npm's order of preference. */
export const LOCKFILES = ['npm-shrinkwrap.json', 'package-lock.json'] as const;

export interface InstallOptions {
  policy: TestProcessPolicy;
  /** npm's download cache (shared by every install of the cache). */
  npmCache: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * What names an install: the lockfile's bytes and the npm settings it is made
 * with (an `.npmrc`'s `legacy-peer-deps` or registry changes what is installed).
 * Without settings, the lockfile's SHA-256 alone, as before they were carried.
 */
export function installKey(lockfile: Buffer, npmrc: string): string {
  const hash = createHash('sha256').update(lockfile);
  if (npmrc !== '') hash.update('\0.npmrc\0').update(npmrc);
  return hash.digest('hex');
}

/**
 * Runs `npm ci` in `dir` (which holds package.json, the lockfile and the
 * version's `.npmrc` without credentials). Throws an
 * error whose message starts with what failed and carries npm's first lines of
 * stderr.
 */
export async function npmCi(dir: string, opts: InstallOptions): Promise<void> {
  const user = opts.policy.runAs;
  if (user) await chownTree(dir, user.uid, user.gid);
  const env = testEnvironment({ PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', npm_config_cache: opts.npmCache, npm_config_update_notifier: 'false' }, opts.policy);
  const start = spawnAs(user, 'npm', ['ci', '--no-audit', '--no-fund']);
  const failure = await new Promise<string | null>((resolve) => {
    const stderr: Buffer[] = [];
    let stderrBytes = 0;
    const child = spawn(start.file, start.args, { cwd: dir, env, uid: start.uid, gid: start.gid, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let settled = false;
    const finish = (why: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (child.pid !== undefined) killQuietly(-child.pid); // install scripts' leftovers too
      resolve(why);
    };
    const timer = setTimeout(() => finish(`timed out after ${Math.round(opts.timeoutMs / 1000)}s`), opts.timeoutMs);
    const onAbort = (): void => finish('stopped (the run was aborted)');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderrBytes > 64 * 1024) return;
      stderr.push(chunk);
      stderrBytes += chunk.length;
    });
    child.on('error', (err) => finish(`cannot start npm: ${err.message}`));
    child.on('close', (code, signal) => {
      if (code === 0) return finish(null);
      const said = firstLines(Buffer.concat(stderr).toString('utf8'));
      finish(`${code === null ? `killed by signal ${signal ?? 'unknown'}` : `exited with code ${code}`}${said ? `: ${said}` : ''}`);
    });
  });
  if (failure !== null) throw new Error(`npm ci of the suite's dependencies failed: ${failure}`);
  // Taken back: tests (as --run-as's user) read it, and may not change what other versions share.
  if (user) await chownTree(dir, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
}

/** npm's first lines that say something (not its bare `npm error` spacers), trimmed, as one string. */
export function firstLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !/^npm (error|ERR!|warn|WARN)$/.test(l)).slice(0, STDERR_LINES);
  const joined = lines.join('\n');
  return joined.length > STDERR_CHARS ? `${joined.slice(0, STDERR_CHARS)}…` : joined;
}

/** Gives `dir` and everything under it (links themselves, not what they point at) to uid:gid. */
async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await chown(dir, uid, gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(file, uid, gid);
    else if (entry.isSymbolicLink()) await lchown(file, uid, gid);
    else await chown(file, uid, gid);
  }
}
