/**
 * Builds the dashboard's page code into dist/dashboard: one ES module and one
 * stylesheet, minified, with content hashes in their names (so they can be
 * cached for good), plus manifest.json naming them for the server.
 *
 * esbuild because it bundles TypeScript + JSX + CSS in one step in tens of
 * milliseconds with no plugin stack; Preact because it gives components and
 * hooks in about 5 KB gzipped. Runs at `npm run build` (and so at `prepare`,
 * i.e. `npm ci`): users of a built package never build anything.
 *
 * `node dist/src/dashboard/build.js` builds; importing it only defines buildDashboard.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { DashboardManifest } from './serve.js';

/** The repository (or package) root: dist/src/dashboard/build.js is three levels down. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const UI_SOURCE_DIR = path.join(ROOT, 'src', 'dashboard', 'ui');
export const DIST_DASHBOARD_DIR = path.join(ROOT, 'dist', 'dashboard');

export interface BuildReport {
  manifest: DashboardManifest;
  /** Bytes of each output, raw and gzipped (what the budget test measures). */
  sizes: { js: number; css: number; jsGzip: number; cssGzip: number };
}

export async function buildDashboard(outDir = DIST_DASHBOARD_DIR): Promise<BuildReport> {
  // esbuild is a devDependency: loaded only when building, never by the server.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(UI_SOURCE_DIR, 'main.tsx')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: 'app-[hash]',
    outdir: path.join(outDir, 'assets'),
    write: false,
    legalComments: 'eof',
    logLevel: 'silent',
  });
  const assetsDir = path.join(outDir, 'assets');
  mkdirSync(assetsDir, { recursive: true });
  const manifest: Partial<DashboardManifest> = {};
  const sizes = { js: 0, css: 0, jsGzip: 0, cssGzip: 0 };
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    const kind = name.endsWith('.css') ? 'css' : 'js';
    manifest[kind] = name;
    sizes[kind] = file.contents.byteLength;
    sizes[kind === 'css' ? 'cssGzip' : 'jsGzip'] = gzipSync(file.contents, { level: 9 }).byteLength;
    writeAtomically(path.join(assetsDir, name), file.contents);
  }
  if (!manifest.js || !manifest.css) throw new Error('the dashboard build produced no script or no stylesheet');
  writeAtomically(path.join(outDir, 'manifest.json'), Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`));
  removeStale(assetsDir, new Set([manifest.js, manifest.css]));
  return { manifest: manifest as DashboardManifest, sizes };
}

/** Write-then-rename, so a server (or a parallel test) never reads half a file. */
function writeAtomically(file: string, contents: Uint8Array): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, contents);
  renameSync(temp, file);
}

/** Earlier builds' files: a running server has its assets in memory already. */
function removeStale(dir: string, keep: ReadonlySet<string>): void {
  for (const name of readdirSync(dir)) {
    if (keep.has(name) || name.endsWith('.tmp')) continue;
    rmSync(path.join(dir, name), { force: true });
  }
}

/** Newest modification time under a folder (to tell whether a build is stale). */
export function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const report = await buildDashboard();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  process.stderr.write(
    `dashboard: ${report.manifest.js} ${kb(report.sizes.js)} (gzip ${kb(report.sizes.jsGzip)}), ` +
      `${report.manifest.css} ${kb(report.sizes.css)} (gzip ${kb(report.sizes.cssGzip)})\n`,
  );
}
