/**
 * Which Chromium a Chromium project runs on, decided inside the suite's
 * Playwright process (its version and PLAYWRIGHT_BROWSERS_PATH say where its
 * own browsers live), in this order:
 *
 * 1. the operator's explicit choice (RUNSET_CHROMIUM / --chromium), always;
 * 2. the suite's own `launchOptions.executablePath`, kept;
 * 3. what `npx playwright test` would launch — Playwright's managed browser for
 *    the project's `channel`, or for headless Chromium (its headless shell from
 *    1.49 on) — when it is installed;
 * 4. else the system Chromium, and the member's output says so.
 *
 * The flags Chromium needs as root (no sandbox…) are added only when this
 * process runs as root. Every choice is named, with its version, for the
 * member's output.
 *
 * A CommonJS module (.cts → .cjs), loaded by ./wrap-config.cts.
 */
import * as path from 'node:path';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

export interface BrowserOptions {
  /** RUNSET_CHROMIUM / --chromium: the operator's choice for every Chromium project, with its version when known. */
  explicit?: { path: string; version?: string };
  /** The system Chromium, run when the browser Playwright would launch is not installed. */
  system: { path: string; version?: string };
  /** What Chromium needs when run as root. */
  rootArgs: string[];
  /** The suite's @playwright/test CLI: its playwright-core knows where its browsers are. */
  cli: string;
}

export interface BrowserChoice {
  /** To set over the project's own: `undefined` values leave Playwright's choice alone. */
  executablePath: string | undefined;
  channel: string | undefined;
  args: unknown[];
  /** What runs, for the member's output. */
  notices: string[];
}

interface RegistryExecutable {
  name: string;
  browserVersion?: string;
  executablePath(sdkLanguage?: string): string | undefined;
}
interface Registry {
  findExecutable(name: string): RegistryExecutable | undefined;
}

export function chooseBrowser(own: { executablePath?: unknown; channel?: string; args: unknown[] }, options: BrowserOptions): BrowserChoice {
  const args = [...own.args, ...(isRoot() ? options.rootArgs : [])];
  if (options.explicit) {
    const { path: file, version } = options.explicit;
    return { executablePath: file, channel: undefined, args, notices: [`browser: ${named(version, file)}, the operator's choice (RUNSET_CHROMIUM / --chromium)`] };
  }
  if (typeof own.executablePath === 'string' && own.executablePath !== '') {
    return { executablePath: own.executablePath, channel: own.channel, args, notices: [`browser: ${named(versionOf(own.executablePath), own.executablePath)}, the suite's own executablePath`] };
  }
  const channel = own.channel || undefined;
  const managed = playwrightBrowser(options.cli, channel);
  if (managed?.path !== undefined && existsSync(managed.path)) {
    return { executablePath: undefined, channel, args, notices: [`browser: ${named(managed.version, managed.path)}, Playwright's own ${managed.name} (what npx playwright test launches)`] };
  }
  const wanted = managed?.path !== undefined ? `Playwright's own ${managed.name} is not installed at ${managed.path}` : `Playwright has no ${channel ?? 'chromium'} browser to launch here`;
  const system = options.system;
  if (!existsSync(system.path)) {
    // Nothing to fall back on: Playwright says what is missing and how to install it.
    return { executablePath: undefined, channel, args, notices: [`${wanted}, and there is no system Chromium at ${system.path} either`] };
  }
  return { executablePath: system.path, channel: undefined, args, notices: [`${wanted} (npx playwright install chromium): running the system Chromium instead`, `browser: ${named(system.version, system.path)}, the system Chromium`] };
}

function named(version: string | undefined, file: string): string {
  return version ? `${version} (${file})` : `${file} (version unknown)`;
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/**
 * The browser the suite's Playwright launches for a headless Chromium project
 * with `channel`, as its registry computes it (the same rule as Playwright's
 * Chromium: a channel's own executable, else its headless shell where the
 * version has one, else its Chromium). Undefined when the registry cannot be
 * read (an unknown layout): then the system Chromium runs.
 */
function playwrightBrowser(cli: string, channel: string | undefined): { name: string; path: string | undefined; version?: string } | undefined {
  const registry = registryOf(cli);
  if (!registry) return undefined;
  const executable = channel !== undefined ? registry.findExecutable(channel) : (registry.findExecutable('chromium-headless-shell') ?? registry.findExecutable('chromium'));
  if (!executable) return { name: channel ?? 'chromium', path: undefined };
  let file: string | undefined;
  try {
    file = executable.executablePath('javascript');
  } catch {
    file = undefined;
  }
  return { name: executable.name, path: file, version: executable.browserVersion };
}

const registries = new Map<string, Registry | undefined>();

/** The registry of the playwright-core that the CLI at `cli` runs on (found where its versions keep it). */
function registryOf(cli: string): Registry | undefined {
  if (registries.has(cli)) return registries.get(cli);
  let found: Registry | undefined;
  const core = coreDirectory(cli);
  for (const rel of ['lib/coreBundle.js', 'lib/server/registry/index.js', 'lib/server/registry.js', 'lib/utils/registry.js']) {
    const file = core && path.join(core, rel);
    if (!file || !existsSync(file)) continue;
    try {
      const loaded = createRequire(file)(file) as { registry?: Registry | { registry?: Registry } };
      const candidate = (loaded.registry as { registry?: Registry } | undefined)?.registry ?? (loaded.registry as Registry | undefined);
      if (typeof candidate?.findExecutable === 'function') {
        found = candidate;
        break;
      }
    } catch {
      // another version's layout: try the next
    }
  }
  registries.set(cli, found);
  return found;
}

function coreDirectory(cli: string): string | undefined {
  const fromTest = createRequire(cli);
  for (const from of [() => createRequire(fromTest.resolve('playwright/package.json')), () => fromTest]) {
    try {
      return path.dirname(from().resolve('playwright-core/package.json'));
    } catch {
      // @playwright/test depends on playwright-core directly before 1.38
    }
  }
  return undefined;
}

/** `<executable> --version`, asked only in Playwright's runner (its test workers load the config too, and need no notice). */
function versionOf(file: string): string | undefined {
  if (process.env.TEST_WORKER_INDEX !== undefined) return undefined;
  const out = spawnSync(file, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return out.status === 0 ? out.stdout.trim().split('\n')[0] : undefined;
}
