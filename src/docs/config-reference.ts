/**
 * docs/reference/config.md: every key of runset.config.yaml, rendered from the
 * file's JSON Schema (src/config/config-json-schema.ts, itself built from the
 * loader's schemas), so the page says what the loader and editors check.
 *
 * Each object of the file gets a table (key, type, required, limits,
 * description); an object nested in a key, in a list's items or under
 * free-form names (`environments.<name>`) gets its own table below, named by
 * its path. Tests get one table per `type`, from the schema's `if`/`then`.
 */
import { configJsonSchema, type JsonSchema } from '../config/config-json-schema.js';
import { REFUSED_VARIABLES } from '../config/dangerous-variables.js';
import { code, generatedHeader, table, text } from './markdown.js';

type Section = { path: string; schema: JsonSchema; note?: string };

/** Patterns longer than this (the case-insensitive name lists) say less in a table than the description does. */
const LONGEST_PATTERN_SHOWN = 80;

const LIMIT_WORDS: ReadonlyArray<[string, string]> = [
  ['minLength', 'min length'],
  ['maxLength', 'max length'],
  ['minimum', 'min'],
  ['exclusiveMinimum', 'more than'],
  ['maximum', 'max'],
  ['minItems', 'min items'],
  ['maxItems', 'max items'],
  ['minProperties', 'min keys'],
  ['maxProperties', 'max keys'],
  ['format', 'format'],
];

function asSchema(value: unknown): JsonSchema | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as JsonSchema) : undefined;
}

function members(schema: JsonSchema): JsonSchema[] {
  return [...((schema.anyOf as JsonSchema[] | undefined) ?? []), ...((schema.oneOf as JsonSchema[] | undefined) ?? [])];
}

function constValues(schema: JsonSchema): unknown[] | undefined {
  if ('const' in schema) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum as unknown[];
  const all = members(schema);
  if (all.length > 0 && all.every((m) => 'const' in m)) return all.map((m) => m.const);
  return undefined;
}

function isObject(schema: JsonSchema): boolean {
  return schema.type === 'object' || asSchema(schema.properties) !== undefined || asSchema(schema.patternProperties) !== undefined;
}

/** A schema's type in words: `string`, `list of string`, `mapping`, `null or mapping`, `"http"`. */
export function typeOf(schema: JsonSchema): string {
  const values = constValues(schema);
  if (values) return values.map((v) => JSON.stringify(v)).join(' or ');
  const alternatives = members(schema).filter((m) => Object.keys(m).length > 0 && !('required' in m && Object.keys(m).length === 1));
  if (alternatives.length > 0) return [...new Set(alternatives.map(typeOf))].join(' or ');
  if (schema.type === 'array') {
    const items = asSchema(schema.items);
    return items && Object.keys(items).length > 0 ? `list of ${typeOf(items)}` : 'list';
  }
  if (isObject(schema)) return 'mapping';
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return schema.type.join(' or ');
  return 'any';
}

/** The rules a value must keep, in words; a list's item rules as `each: …`. */
export function limitsOf(schema: JsonSchema): string {
  const limits: string[] = [];
  for (const [keyword, word] of LIMIT_WORDS) if (schema[keyword] !== undefined) limits.push(`${word} ${text(schema[keyword])}`);
  if (typeof schema.pattern === 'string') {
    limits.push(schema.pattern.length <= LONGEST_PATTERN_SHOWN ? `pattern ${code(schema.pattern)}` : 'pattern (see the description)');
  }
  const items = asSchema(schema.items);
  if (items) {
    const each = limitsOf(items);
    if (each) limits.push(`each: ${each}`);
  }
  for (const member of members(schema)) {
    const more = limitsOf(member);
    if (more) limits.push(more);
  }
  return limits.join('; ');
}

/** What an absent key means, as JSON in code (`"GET"`, `false`, `["set.finished"]`); empty where the schema names no default. */
export function defaultOf(schema: JsonSchema): string {
  return schema.default === undefined ? '' : code(JSON.stringify(schema.default));
}

/** A mapping with keys worth a table: named ones, or free names whose values have a shape (not JSON's `{}` values). */
function hasNamedKeys(schema: JsonSchema): boolean {
  const named = Object.keys(asSchema(schema.properties) ?? {}).length > 0;
  return named || Object.values(asSchema(schema.patternProperties) ?? {}).some((v) => Object.keys(asSchema(v) ?? {}).length > 0);
}

/** The mapping a key holds, if any: itself, its list's items, or one of its alternatives. */
function objectWithin(schema: JsonSchema): { schema: JsonSchema; suffix: string } | undefined {
  if (isObject(schema) && hasNamedKeys(schema)) return { schema, suffix: '' };
  const items = asSchema(schema.items);
  if (items) {
    const inner = objectWithin(items);
    if (inner) return { schema: inner.schema, suffix: `[]${inner.suffix}` };
  }
  for (const member of members(schema)) {
    const inner = objectWithin(member);
    if (inner) return inner;
  }
  return undefined;
}

/** A name standing for the free-form keys a pattern allows. */
function freeKeyName(parentPath: string): string {
  if (parentPath === 'environments') return '<environment>';
  if (parentPath.endsWith('variables')) return '<VARIABLE>';
  if (parentPath.endsWith('headers')) return '<header>';
  return '<key>';
}

function renderSection(section: Section, out: string[]): void {
  const { path, schema } = section;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const rows: string[][] = [];
  const below: Section[] = [];
  const properties = asSchema(schema.properties) ?? {};
  for (const [key, value] of Object.entries(properties)) {
    const child = asSchema(value) ?? {};
    rows.push([code(key), typeOf(child), required.has(key) ? 'yes' : 'no', defaultOf(child), limitsOf(child), text(child.description)]);
    const inner = objectWithin(child);
    if (inner) below.push({ path: `${path ? `${path}.` : ''}${key}${inner.suffix}`, schema: inner.schema });
  }
  for (const [pattern, value] of Object.entries(asSchema(schema.patternProperties) ?? {})) {
    const child = asSchema(value) ?? {};
    if (pattern === '^x-' && path === '') {
      rows.push([code('x-…'), 'any', 'no', '', '', 'any key starting with x-: ignored by runset (for YAML anchors and your own notes)']);
      continue;
    }
    const name = freeKeyName(path);
    rows.push([code(name), typeOf(child), 'no', defaultOf(child), `name matches ${code(pattern)}`, text(child.description)]);
    const inner = objectWithin(child);
    if (inner) below.push({ path: `${path}.${name}${inner.suffix}`, schema: inner.schema });
  }
  out.push(`## ${path === '' ? 'The file' : code(path)}`, '');
  if (section.note) out.push(section.note, '');
  if (schema.description && path !== '') out.push(text(schema.description), '');
  const choices = ((schema.oneOf as JsonSchema[] | undefined) ?? []).map((m) => (m.required as string[] | undefined) ?? []).filter((r) => r.length > 0);
  if (choices.length > 0) out.push(`Exactly one of: ${choices.map((r) => r.map(code).join(' + ')).join(', ')}.`, '');
  if (schema.additionalProperties === false) out.push('No other keys are allowed.', '');
  if (asSchema(schema.propertyNames)?.not) {
    out.push(`These names are refused, in any case, as a loader, runtime or shell reads them: ${REFUSED_VARIABLES.names.map(code).join(', ')}, and names starting with ${REFUSED_VARIABLES.prefixes.map(code).join(', ')}.`, '');
  }
  out.push(table(['key', 'type', 'required', 'default', 'limits', 'description'], rows), '');
  for (const next of below) {
    if (next.path === 'tests[]') renderTests(next.schema, out);
    else renderSection(next, out);
  }
}

/** `tests[]`: the keys every test has, then each `type`'s own keys (the schema's `if`/`then` per type). */
function renderTests(items: JsonSchema, out: string[]): void {
  renderSection({ path: 'tests[]', schema: { ...items, allOf: undefined }, note: 'A test\'s keys depend on its `type`: each type\'s table follows.' }, out);
  for (const branch of (items.allOf as JsonSchema[] | undefined) ?? []) {
    const type = asSchema(asSchema(asSchema(branch.if)?.properties)?.type)?.const;
    const then = asSchema(branch.then);
    if (typeof type !== 'string' || !then) continue;
    renderSection({ path: `tests[] (type: ${type})`, schema: then }, out);
  }
}

export function renderConfigReference(schema: JsonSchema = configJsonSchema()): string {
  const out: string[] = [
    generatedHeader('schema/runset.config.schema.json (src/config/config-json-schema.ts)'),
    '',
    '# runset.config.yaml reference',
    '',
    text(schema.description).replace(/ Generated from runset's loader \(npm run build:schema\): do not edit\.$/, ''),
    '',
    'Editors can check the file with the JSON Schema `schema/runset.config.schema.json`. Every table below is rendered from it; `runset check` also applies the loader-only rules listed at the end. A key left out takes its default (src/config/config-defaults.ts, read by the loader and the schema alike); where none is shown, leaving it out means none (no limit), or for a Playwright or framework test its suite\'s own setting.',
    '',
  ];
  renderSection({ path: '', schema }, out);
  const comment = text(schema.$comment);
  if (comment) out.push('## Rules the loader checks beyond this schema', '', comment, '');
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}
