/**
 * Bundles ./typebox.ts (TypeBox's `Type`, `Compile` and `Value`) into one ES
 * module over its compiled output, dist/src/core/typebox.js: the same exports
 * from one file instead of some 700, so a process start loads TypeBox in a few
 * milliseconds instead of about half a second of CPU (bench/README.md,
 * "process starts"). Run by `npm run build` after tsc; rebuilding from the
 * TypeScript source each time, so running it twice changes nothing.
 *
 * `node dist/src/core/typebox-build.js` writes the file; importing this module
 * only defines the build.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: dist/src/core/typebox-build.js is three levels down. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const TYPEBOX_BUNDLE = path.join(ROOT, 'dist', 'src', 'core', 'typebox.js');

export async function buildTypeboxBundle(outfile = TYPEBOX_BUNDLE): Promise<void> {
  // esbuild is a devDependency: loaded only when building.
  const esbuild = await import('esbuild');
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ['src/core/typebox.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    preserveSymlinks: true,
    legalComments: 'eof',
    banner: { js: '// TypeBox in one module, bundled by `npm run build` (src/core/typebox-build.ts) from src/core/typebox.ts.' },
    logLevel: 'warning',
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildTypeboxBundle();
  process.stderr.write(`wrote ${path.relative(process.cwd(), TYPEBOX_BUNDLE)}\n`);
}
