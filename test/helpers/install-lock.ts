/**
 * One install of a package version at a time across test processes. npm test
 * runs three files at once, and files that need the same cached version
 * (node_modules/.cache/runset-compat, runset-frameworks) sit side by side in
 * its order: on a fresh clone each would run the same `npm install` at the same
 * moment, costing the machine two or three times over. The first takes
 * `<dir>.lock` (a folder, made atomically, holding its pid); the others wait
 * until the version is installed or the holder is gone, then look again.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const WAIT_MS = 250;
/** A lock whose holder has not written its pid within this long was left by a process killed at once. */
const UNWRITTEN_MS = 10_000;
/** No install takes longer (npm's own timeout is 300 s). */
const GIVE_UP_MS = 330_000;

/** Releases a held lock. */
export type Release = () => void;

/** Takes `<dir>.lock`, waiting while another live process holds it; undefined when `installed()` became true meanwhile. */
export async function installLock(dir: string, installed: () => boolean): Promise<Release | undefined> {
  const until = Date.now() + GIVE_UP_MS;
  for (;;) {
    const taken = tryTake(dir, installed);
    if (taken !== 'held') return taken;
    if (Date.now() > until) throw new Error(`waited ${GIVE_UP_MS} ms for another test process to install ${dir}`);
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
  }
}

/** installLock for synchronous callers: blocks while it waits. */
export function installLockSync(dir: string, installed: () => boolean): Release | undefined {
  const until = Date.now() + GIVE_UP_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const taken = tryTake(dir, installed);
    if (taken !== 'held') return taken;
    if (Date.now() > until) throw new Error(`waited ${GIVE_UP_MS} ms for another test process to install ${dir}`);
    Atomics.wait(pause, 0, 0, WAIT_MS);
  }
}

function tryTake(dir: string, installed: () => boolean): Release | undefined | 'held' {
  if (installed()) return undefined;
  const lock = `${dir}.lock`;
  mkdirSync(path.dirname(lock), { recursive: true });
  try {
    mkdirSync(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (holderAlive(lock)) return 'held';
    rmSync(lock, { recursive: true, force: true });
    return 'held'; // taken again on the next look, by this process or another
  }
  writeFileSync(path.join(lock, 'pid'), String(process.pid));
  const release = () => rmSync(lock, { recursive: true, force: true });
  if (!installed()) return release;
  release(); // installed by the holder this process waited for
  return undefined;
}

function holderAlive(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(lock, 'pid'), 'utf8'));
  } catch {
    try {
      return Date.now() - statSync(lock).mtimeMs < UNWRITTEN_MS; // being written now, or its writer died
    } catch {
      return false; // released meanwhile
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
