/**
 * Writes docs/reference/{config,cli,api}.md from the code: the config's JSON
 * Schema, the CLI's commander program and the API's served OpenAPI document.
 * The pages are committed; test/unit/reference-docs.test.ts renders them
 * afresh and fails when a committed page differs.
 *
 * `npm run build:docs` (node dist/src/docs/build-reference.js) writes them;
 * importing this module only defines the rendering.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderConfigReference } from './config-reference.js';
import { renderCliReference } from './cli-reference.js';
import { renderApiReference, type OpenApiDocument } from './api-reference.js';
import { servedOpenApiDocument } from './openapi-document.js';

/** The repository root: dist/src/docs/build-reference.js is three levels down. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const REFERENCE_DIR = path.join(ROOT, 'docs', 'reference');

/** Each page's file name (under docs/reference/) and its text. */
export async function renderReferencePages(): Promise<Record<string, string>> {
  const doc = (await servedOpenApiDocument()) as OpenApiDocument;
  return {
    'config.md': renderConfigReference(),
    'cli.md': await renderCliReference(),
    'api.md': renderApiReference(doc),
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  mkdirSync(REFERENCE_DIR, { recursive: true });
  for (const [name, text] of Object.entries(await renderReferencePages())) {
    writeFileSync(path.join(REFERENCE_DIR, name), text);
    process.stderr.write(`wrote ${path.relative(process.cwd(), path.join(REFERENCE_DIR, name))}\n`);
  }
}
