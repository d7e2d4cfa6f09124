/**
 * Writes schema/runset.config.schema.json, the JSON Schema editors check
 * runset.config.yaml with, from the loader's schemas (./config-json-schema.ts).
 * The file is committed and shipped in the package; test/unit/config-schema.test.ts
 * renders it afresh and fails when it differs from the committed file.
 *
 * `npm run build:schema` (node dist/src/config/build-json-schema.js) writes the
 * file; importing this module only defines the rendering.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configJsonSchema } from './config-json-schema.js';

/** The repository root: dist/src/config/build-json-schema.js is three levels down. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CONFIG_SCHEMA_FILE = path.join(ROOT, 'schema', 'runset.config.schema.json');

/** The file's exact text: two-space JSON and a final newline, so a rebuild of an unchanged schema changes no byte. */
export function renderConfigJsonSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  mkdirSync(path.dirname(CONFIG_SCHEMA_FILE), { recursive: true });
  writeFileSync(CONFIG_SCHEMA_FILE, renderConfigJsonSchema());
  process.stderr.write(`wrote ${path.relative(process.cwd(), CONFIG_SCHEMA_FILE)}\n`);
}
