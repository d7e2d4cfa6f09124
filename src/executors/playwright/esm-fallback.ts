/**
 * Loaded with `node --import` into Playwright's processes when the suite has no
 * @playwright/test of its own: registers ./esm-fallback-hooks.js, so that an ES
 * module spec's `import … from '@playwright/test'` finds runset's copy. (CommonJS
 * specs find it through NODE_PATH, which ES modules ignore.)
 */
import { register } from 'node:module';

register('./esm-fallback-hooks.js', import.meta.url);
