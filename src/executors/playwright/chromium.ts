/**
 * The browser: the system's Chromium (Debian's package by default), never one
 * downloaded by Playwright. RUNSET_CHROMIUM points elsewhere.
 */
import { accessSync, constants, statSync } from 'node:fs';

export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/**
 * What Chromium needs to run as root in a container: no sandbox (it refuses to
 * start as root otherwise), no GPU, /tmp instead of a small /dev/shm, and none
 * of the background chatter (updates, sync, first-run) a test browser never wants.
 */
export const CHROMIUM_ARGS: readonly string[] = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
]);

/** Why the browser cannot be started, or null when it looks runnable. */
export function browserProblem(executable: string): string | null {
  const hint = 'install Debian\'s chromium package, or set RUNSET_CHROMIUM to a Chromium executable';
  try {
    if (!statSync(executable).isFile()) return `Chromium not found: ${executable} is not a file; ${hint}`;
    accessSync(executable, constants.X_OK);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `Chromium not found at ${executable}; ${hint}`;
    return `Chromium at ${executable} cannot be run (${code ?? 'unknown error'}); ${hint}`;
  }
}
