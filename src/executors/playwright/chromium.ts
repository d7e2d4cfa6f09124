/**
 * runset's side of the browser: the system Chromium (Debian's package by
 * default) that runs when the browser a suite's Playwright would launch is not
 * installed, the operator's RUNSET_CHROMIUM, and their versions. Which one a
 * project runs is decided inside the suite's Playwright process
 * (./browser-choice.cts). Nothing is downloaded.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { promisify } from 'node:util';

export const DEFAULT_CHROMIUM = '/usr/bin/chromium';

/**
 * What Chromium needs to run as root (added only when the browser runs as root) in a container: no sandbox (it refuses to
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

/**
 * Why no Chromium can run a suite on runset's own Playwright (the demo's):
 * neither Playwright's managed Chromium (`npx playwright install chromium`
 * puts its headless shell beside it) nor the system's is there; null when one is.
 */
export async function noChromium(system: string = DEFAULT_CHROMIUM): Promise<string | null> {
  const problem = browserProblem(system);
  if (problem === null) return null;
  const { chromium } = await import('@playwright/test');
  if (existsSync(chromium.executablePath())) return null;
  return `${problem}; Playwright's own Chromium is not installed either (npx playwright install chromium)`;
}

const versions = new Map<string, Promise<string | undefined>>();

/**
 * `<executable> --version` (\`Chromium 156.0.8078.108 built on Debian…\`),
 * asked once per executable and change of it: Debian's wrapper script takes
 * about 0.7 s to answer. Undefined when it cannot tell.
 */
export function chromiumVersion(executable: string): Promise<string | undefined> {
  let stamp: string;
  try {
    stamp = `${executable}\0${statSync(executable).mtimeMs}`;
  } catch {
    return Promise.resolve(undefined);
  }
  let version = versions.get(stamp);
  if (!version) {
    version = promisify(execFile)(executable, ['--version'], { timeout: 10_000 }).then(
      ({ stdout }) => stdout.trim().split('\n')[0] || undefined,
      () => undefined,
    );
    versions.set(stamp, version);
  }
  return version;
}
