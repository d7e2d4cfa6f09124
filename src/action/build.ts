/**
 * Builds the GitHub Action's bundle, action/runset.mjs: src/action/index.ts and
 * everything it imports (the client, the CLI's trigger parsing, the suite
 * packer and their npm dependencies) in one ES module that the runner's Node
 * runs as it is. The bundle is committed (an action is run from its checkout,
 * with nothing installed); test/action/bundle.test.ts builds it afresh and
 * fails when it differs from the committed file.
 *
 * Reproducible on purpose: no minification names, no absolute paths (the
 * repository root is the working directory, symlinked node_modules are not
 * followed), and the version is written in at build time.
 *
 * `node dist/src/action/build.js` writes the file; importing this module only
 * defines the build.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: dist/src/action/build.js is three levels down. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const ACTION_BUNDLE = path.join(ROOT, 'action', 'runset.mjs');

/**
 * CommonJS packages inside an ES module bundle call `require` for Node's
 * built-ins; this gives them the real one.
 */
const BANNER = [
  '// The runset GitHub Action, bundled by `npm run build:action` from src/action/index.ts. Do not edit: a test rebuilds it and compares.',
  "import { createRequire as __runsetCreateRequire } from 'node:module';",
  'const require = __runsetCreateRequire(import.meta.url);',
].join('\n');

export async function buildActionBundle(): Promise<Uint8Array> {
  // esbuild is a devDependency: loaded only when building.
  const esbuild = await import('esbuild');
  const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ['src/action/index.ts'],
    outfile: ACTION_BUNDLE,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    preserveSymlinks: true,
    banner: { js: BANNER },
    legalComments: 'eof',
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        // src/core/version.ts reads package.json beside dist/; the bundle has no such neighbour, so it carries the version.
        name: 'runset-version',
        setup(build) {
          const versionModule = path.join(ROOT, 'src', 'core', 'version.js');
          build.onResolve({ filter: /\/version\.js$/ }, (args) => (path.join(args.resolveDir, args.path) === versionModule ? { path: 'version', namespace: 'runset-version' } : undefined));
          build.onLoad({ filter: /.*/, namespace: 'runset-version' }, () => ({ contents: `export const VERSION = ${JSON.stringify(version)};`, loader: 'js' }));
        },
      },
    ],
  });
  const [file] = result.outputFiles;
  if (!file || result.outputFiles.length !== 1) throw new Error(`the action build produced ${result.outputFiles.length} files; expected one`);
  return file.contents;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const contents = await buildActionBundle();
  writeFileSync(ACTION_BUNDLE, contents);
  process.stderr.write(`wrote ${path.relative(process.cwd(), ACTION_BUNDLE)} (${(contents.byteLength / 1024).toFixed(0)} KiB)\n`);
}
