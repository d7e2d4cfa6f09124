import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// dist/src/core/version.js → the package root is three folders up.
export const VERSION = (require('../../../package.json') as { version: string }).version;
