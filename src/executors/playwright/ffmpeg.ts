/**
 * Where the Playwright that runs a suite looks for the ffmpeg it records videos
 * with, as its registry (playwright-core's server/registry) computes it: the
 * `ffmpeg` entry of its browsers.json gives the revision, and the file is
 * `<registry>/ffmpeg-<revision>/ffmpeg-linux` (ffmpeg-mac, ffmpeg-win64.exe),
 * where the registry folder is PLAYWRIGHT_BROWSERS_PATH (`0`: inside
 * playwright-core), else the user's cache folder + `ms-playwright`. Nothing is
 * downloaded, so a suite that asks for video without it would fail every test.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';

const EXECUTABLE: Partial<Record<NodeJS.Platform, string>> = { linux: 'ffmpeg-linux', darwin: 'ffmpeg-mac', win32: 'ffmpeg-win64.exe' };

/** The ffmpeg path Playwright (its CLI at `cli`, started in `cwd`) would use under `env`; undefined when it cannot be told. */
export function ffmpegPath(cli: string, env: NodeJS.ProcessEnv, cwd: string, platform: NodeJS.Platform = process.platform): string | undefined {
  const executable = EXECUTABLE[platform];
  if (executable === undefined) return undefined;
  let core: string;
  let revision: string | undefined;
  try {
    const manifest = createRequire(cli).resolve('playwright-core/package.json');
    core = path.dirname(manifest);
    const browsers = JSON.parse(readFileSync(path.join(core, 'browsers.json'), 'utf8')) as { browsers?: Array<{ name?: string; revision?: string }> };
    revision = browsers.browsers?.find((b) => b.name === 'ffmpeg')?.revision;
  } catch {
    return undefined;
  }
  if (revision === undefined) return undefined;
  return path.join(registryDirectory(core, env, cwd, platform), `ffmpeg-${revision}`, executable);
}

/** Where the suite's Playwright looks for ffmpeg when nothing is there; undefined when it is there (or the place is unknown, and Playwright decides). */
export function missingFfmpeg(cli: string, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const file = ffmpegPath(cli, env, cwd);
  return file === undefined || existsSync(file) ? undefined : file;
}

function registryDirectory(core: string, env: NodeJS.ProcessEnv, cwd: string, platform: NodeJS.Platform): string {
  // Playwright reads its settings from the environment or, under npm, from npm's config.
  const defined = env.PLAYWRIGHT_BROWSERS_PATH ?? env.npm_config_playwright_browsers_path;
  if (defined === '0') return path.join(core, '.local-browsers');
  if (defined) return path.resolve(env.INIT_CWD ?? cwd, defined);
  const home = env.HOME ?? homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Caches', 'ms-playwright');
  if (platform === 'win32') return path.join(env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'), 'ms-playwright');
  return path.join(env.XDG_CACHE_HOME ?? path.join(home, '.cache'), 'ms-playwright');
}
