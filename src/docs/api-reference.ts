/**
 * docs/reference/api.md: every operation of the HTTP API, rendered from the
 * OpenAPI document the server serves (./openapi-document.ts), grouped by tag
 * in the document's own tag order; the role each operation needs comes from
 * the access table (src/auth/policy.ts), and the problem codes from the error
 * registry (src/core/errors.ts), since the document names statuses, not codes.
 */
import { ERRORS } from '../core/errors.js';
import { requiredRole } from '../auth/policy.js';
import { code, generatedHeader, table, text } from './markdown.js';

type Schema = { [keyword: string]: unknown };
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, unknown>>;
  parameters?: Array<{ in: string; name: string; required?: boolean; description?: string; schema?: Schema }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}
export interface OpenApiDocument {
  info?: { title?: string; version?: string; description?: string };
  servers?: Array<{ url: string }>;
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];

/** Every operation of the document with its method and path, in the document's order. */
export function operationsOf(doc: OpenApiDocument): Array<{ method: string; path: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

function resolve(doc: OpenApiDocument, schema: Schema | undefined): Schema | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  return doc.components?.schemas?.[ref.replace('#/components/schemas/', '')];
}

function typeOf(doc: OpenApiDocument, schema: Schema | undefined): string {
  if (!schema) return '';
  if (typeof schema.$ref === 'string') return schema.$ref.replace('#/components/schemas/', '');
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' or ');
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) return [...new Set(alternatives.map((s) => typeOf(doc, s)))].join(' or ');
  if (schema.type === 'array') return `list of ${typeOf(doc, schema.items as Schema | undefined) || 'any'}`;
  if (Array.isArray(schema.type)) return schema.type.join(' or ');
  return typeof schema.type === 'string' ? schema.type : 'any';
}

function limitsOf(schema: Schema | undefined): string {
  if (!schema) return '';
  const words: Array<[string, string]> = [['minLength', 'min length'], ['maxLength', 'max length'], ['minimum', 'min'], ['maximum', 'max'], ['minItems', 'min items'], ['maxItems', 'max items'], ['format', 'format'], ['pattern', 'pattern'], ['default', 'default']];
  return words.filter(([k]) => schema[k] !== undefined).map(([k, w]) => `${w} ${k === 'pattern' || k === 'default' ? code(JSON.stringify(schema[k]).replace(/^"|"$/g, '')) : String(schema[k])}`).join('; ');
}

function authOf(op: Operation): string {
  const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
  if (schemes.length === 0) return 'none';
  const role = requiredRole(op.operationId);
  return `${schemes.join(' or ')}${role ? `; role ${code(role)}` : ''}`;
}

function bodyTable(doc: OpenApiDocument, op: Operation): string[] {
  const content = op.requestBody?.content ?? {};
  const out: string[] = [];
  for (const [mediaType, { schema }] of Object.entries(content)) {
    const body = resolve(doc, schema);
    const name = typeof schema?.$ref === 'string' ? ` (${typeOf(doc, schema)})` : '';
    out.push(`Request body${op.requestBody?.required ? '' : ' (optional)'}: ${code(mediaType)}${name}.`, '');
    const properties = (body?.properties ?? {}) as Record<string, Schema>;
    const required = new Set((body?.required as string[] | undefined) ?? []);
    if (Object.keys(properties).length === 0) continue;
    const rows = Object.entries(properties).map(([key, value]) => {
      const field = resolve(doc, value) ?? value;
      return [code(key), typeOf(doc, value), required.has(key) ? 'yes' : 'no', limitsOf(field), text(field.description)];
    });
    out.push(table(['field', 'type', 'required', 'limits', 'description'], rows), '');
  }
  return out;
}

function responseRows(doc: OpenApiDocument, op: Operation): string[][] {
  return Object.entries(op.responses ?? {}).map(([status, response]) => {
    const bodies = Object.entries(response.content ?? {}).map(([mediaType, { schema }]) => `${code(mediaType)} ${typeOf(doc, schema)}`.trim());
    const problems = bodies.some((b) => b.includes('problem+json'))
      ? Object.entries(ERRORS).filter(([, e]) => String(e.status) === status).map(([c]) => code(c)).join(', ')
      : '';
    return [status, response.description ?? '', bodies.join(', '), problems];
  });
}

function renderOperation(doc: OpenApiDocument, method: string, path: string, op: Operation, out: string[]): void {
  out.push(`### ${code(`${method} ${path}`)}`, '');
  if (op.summary) out.push(`**${op.summary}** (${code(op.operationId ?? '')}; tag ${op.tags?.join(', ') ?? 'none'}; auth: ${authOf(op)})`, '');
  if (op.description) out.push(op.description, '');
  const parameters = op.parameters ?? [];
  if (parameters.length > 0) {
    const rows = parameters.map((p) => [code(p.name), p.in, p.required ? 'yes' : 'no', typeOf(doc, p.schema), limitsOf(p.schema), p.description ?? '']);
    out.push(table(['parameter', 'in', 'required', 'type', 'limits', 'description'], rows), '');
  }
  out.push(...bodyTable(doc, op));
  out.push(table(['status', 'meaning', 'body', 'codes with this status'], responseRows(doc, op)), '');
}

export function renderApiReference(doc: OpenApiDocument): string {
  const prefix = doc.servers?.[0]?.url ?? '';
  const out: string[] = [
    generatedHeader('the OpenAPI document GET /api/openapi.json serves (src/api/routes/openapi.ts)'),
    '',
    `# ${doc.info?.title ?? 'API'} reference`,
    '',
    `${doc.info?.description ?? ''} Paths are relative to ${code(prefix)}; the document itself is ${code(`GET ${prefix}/openapi.json`)}. A role reaches the ones below it (read < trigger < admin); the worker role may use the worker protocol only (src/auth/policy.ts). The document names each operation's statuses, not its problem codes: the column "codes with this status" lists every registry code with that status, of which an operation answers some (see the table at the end).`,
    '',
  ];
  const operations = operationsOf(doc);
  const tagNames = [...(doc.tags ?? []).map((t) => t.name), ...new Set(operations.flatMap((o) => o.op.tags ?? []))];
  for (const tag of new Set(tagNames)) {
    const inTag = operations.filter((o) => (o.op.tags ?? []).includes(tag));
    if (inTag.length === 0) continue;
    out.push(`## ${tag}`, '');
    const description = doc.tags?.find((t) => t.name === tag)?.description;
    if (description) out.push(description, '');
    for (const { method, path, op } of inTag) renderOperation(doc, method, path, op, out);
  }
  const untagged = operations.filter((o) => (o.op.tags ?? []).length === 0);
  if (untagged.length > 0) {
    out.push('## Other operations', '');
    for (const { method, path, op } of untagged) renderOperation(doc, method, path, op, out);
  }
  out.push('## Problem codes', '', 'Every error answers `application/problem+json` with a stable `code` (src/core/errors.ts):', '');
  out.push(table(['code', 'status', 'title'], Object.entries(ERRORS).map(([c, e]) => [code(c), String(e.status), e.title])), '');
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}
