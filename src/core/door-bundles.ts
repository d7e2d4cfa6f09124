/**
 * Bundles each door module (below) into one ES module over its compiled
 * output in dist/: the same exports from one file instead of tens or hundreds,
 * so a process start loads the package behind it in a fraction of the CPU
 * (bench/README.md, "process starts" and "runset's start"). A door is the only
 * module that imports its packages at run time (an ESLint rule says so), so one
 * copy of each package is loaded. Run by `npm run build` after tsc; rebuilding
 * from the TypeScript source each time, so running it twice changes nothing.
 * Without it (a bare `tsc`) each door works as compiled, only slower.
 *
 * `node dist/src/core/door-bundles.js` writes the bundles; importing this module
 * only defines the build.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: dist/src/core/door-bundles.js is three levels down. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface Door {
  /** The door's TypeScript source, from the repository root. */
  source: string;
  /** What it opens onto, for the bundle's first line. */
  what: string;
  /** Its packages are CommonJS: their require() of Node's modules needs a require in the ES module. */
  commonJs: boolean;
}

export const DOORS: readonly Door[] = [
  // ~700 ES modules, ~0.5 s of CPU at each start unbundled.
  { source: 'src/core/typebox.ts', what: 'TypeBox', commonJs: false },
  // Fastify, its compilers and @fastify/swagger: ~230 CommonJS modules, ~0.28 s of CPU unbundled, ~0.1 s bundled.
  { source: 'src/core/fastify.ts', what: 'Fastify', commonJs: true },
  // ~70 CommonJS modules, ~0.06 s unbundled, ~0.015 s bundled.
  { source: 'src/config/yaml.ts', what: 'yaml', commonJs: true },
  // pino and its streams, ~0.035 s unbundled, ~0.015 s bundled.
  { source: 'src/roles/logger.ts', what: 'pino', commonJs: true },
];

/** Where tsc writes a door's output, which its bundle replaces. */
export function bundlePath(door: Door): string {
  return path.join(ROOT, 'dist', door.source.replace(/\.ts$/, '.js'));
}

const REQUIRE_BANNER = "import { createRequire as __doorCreateRequire } from 'node:module';\nconst require = __doorCreateRequire(import.meta.url);";

export async function buildDoorBundle(door: Door, outfile = bundlePath(door)): Promise<void> {
  // esbuild is a devDependency: loaded only when building.
  const esbuild = await import('esbuild');
  const first = `// ${door.what} in one module, bundled by \`npm run build\` (src/core/door-bundles.ts) from ${door.source}.`;
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [door.source],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    preserveSymlinks: true,
    legalComments: 'eof',
    banner: { js: door.commonJs ? `${first}\n${REQUIRE_BANNER}` : first },
    logLevel: 'warning',
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const door of DOORS) {
    await buildDoorBundle(door);
    process.stderr.write(`wrote ${path.relative(process.cwd(), bundlePath(door))}\n`);
  }
}
