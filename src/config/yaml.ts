/**
 * The one door to the yaml package's runtime (an ESLint rule says so; type-only
 * imports of `yaml` are free). Its ~70 CommonJS modules cost every start that
 * reads runset.config.yaml about 0.06 s of CPU; `npm run build` replaces this
 * file's compiled output with one bundle of the same exports
 * (src/core/door-bundles.ts), loaded in about 0.015 s. Without that step this
 * file works as it is, only slower.
 */
export { Document, isNode, isScalar, LineCounter, parseDocument } from 'yaml';
