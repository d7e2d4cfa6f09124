// Lint the TypeScript sources with typescript-eslint's type-aware recommended rules.
//
// `npm run lint` keeps ESLint's cache in node_modules/.cache/eslint/ (by content, one file per checkout):
// a run re-lints only the files that changed since the last one (~100 s of CPU for all, mostly the type
// checker, against a few seconds). The cache does not know that a typed rule read another file's types:
// make a function async and its callers' floating promises show only once those files change or the cache
// is gone. `npm ci` (CI, a clean clone) starts without it; `rm -rf node_modules/.cache/eslint` does too.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Each heavy package's one door (src/core/door-bundles.ts bundles them): only the door imports the package at run time. */
const DOORS = [
  { file: 'src/core/typebox.ts', packages: ['typebox', 'typebox/compile', 'typebox/value'], message: 'import Type, Compile and Value from src/core/typebox.ts (bundled at build); type-only imports may name typebox' },
  { file: 'src/core/fastify.ts', packages: ['fastify', '@fastify/swagger', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'], message: 'import Fastify and its plugins from src/core/fastify.ts (bundled at build); type-only imports may name fastify' },
  { file: 'src/config/yaml.ts', packages: ['yaml'], message: "import yaml's functions from src/config/yaml.ts (bundled at build); type-only imports may name yaml" },
  { file: 'src/roles/logger.ts', packages: ['pino'], message: 'take the logger from src/roles/logger.ts (bundled with pino at build); type-only imports may name pino' },
];

export default tseslint.config(
  { ignores: ['dist/', 'action/runset.mjs', 'node_modules/', 'examples/**/node_modules/', '.runset/', 'coverage/', 'docs/.vitepress/dist/', 'docs/.vitepress/cache/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'error',
      // node:test's test()/describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
    },
  },
  ...[
    // Heavy packages load through one door each, which the build bundles into one module (src/core/door-bundles.ts):
    // TypeBox ~0.5 s of CPU less at each start, Fastify ~0.18 s, yaml ~0.045 s, pino ~0.02 s.
    { files: ['src/**/*.ts'], ignores: ['src/docs/**'], doors: DOORS },
    // The build tools in src/docs/ make their own silent logger (they may not import src/roles/).
    { files: ['src/docs/**/*.ts'], doors: DOORS.filter((door) => !door.packages.includes('pino')) },
  ].map(({ files, ignores = [], doors }) => ({
    files,
    ignores: [...ignores, ...DOORS.map((door) => door.file), 'src/dashboard/ui/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: doors.flatMap((door) => door.packages.map((name) => ({ name, allowTypeImports: true, message: door.message }))) },
      ],
    },
  })),
  {
    // The docs site's config is loaded by VitePress (its own esbuild), outside tsconfig.json's project.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs', 'docs/.vitepress/*.mts'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: { ...globals.node } },
  },
);
