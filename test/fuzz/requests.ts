/**
 * fast-check arbitraries of HTTP requests, generated from the OpenAPI model:
 * documented operations with valid and broken path ids, query strings,
 * headers and bodies, sent with each of the fuzz keys (or none); plus methods
 * a path lacks and paths the document does not have.
 */
import fc from 'fast-check';
import type { OpenApiModel, Operation, Parameter, Schema } from './openapi-model.js';

/** A credential the fuzzer sends, and the role it carries ('none': it authenticates nobody). */
export interface FuzzKey {
  label: string;
  /** The whole Authorization header value, or null for none. */
  authorization: string | null;
  role: string;
}

/** Values worth sending for known names (environments, variables, keys): random strings rarely hit them. */
export interface Hints {
  ids: readonly string[];
  strings: Readonly<Record<string, readonly string[]>>;
  /** Keys of `envOverride`-like maps. */
  mapKeys: readonly string[];
}

export interface FuzzRequest {
  method: string;
  /** Path and query, after the server prefix. */
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  key: FuzzKey;
  /** The documented operation it aims at, if any. */
  operation: Operation | undefined;
}

const junkText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '%', '%00', '..', '../..', '\u0000', 'null', '-1', '1e999', '💥', 'a'.repeat(300), '{}', '[]', '__proto__', 'constructor'),
);

export function requestArbitrary(model: OpenApiModel, keys: readonly FuzzKey[], hints: Hints): fc.Arbitrary<FuzzRequest> {
  // Working keys more often than broken ones: most of the API lies behind them.
  const key = fc.oneof(...keys.map((chosen) => ({ weight: chosen.role === 'none' ? 1 : 2 * (keys.length - 1), arbitrary: fc.constant(chosen) })));
  const documented = fc.constantFrom(...model.operations).chain((op) =>
    fc.record({
      path: pathOf(op, hints),
      query: queryOf(op, model, hints),
      headers: headersOf(op, model, hints),
      body: bodyOf(op, model, hints),
      key,
    }).map(({ path, query, headers, body, key: chosen }) => finish(op.method, `${path}${query}`, headers, body, chosen, op)),
  );
  const paths = [...new Set(model.operations.map((op) => op.path))];
  const wrongMethod = fc
    .record({ path: fc.constantFrom(...paths), method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'), key, body: fc.option(fc.json(), { nil: undefined }) })
    .map(({ path, method, key: chosen, body }) => ({ path: path.replace(/\{[^}]+\}/g, hints.ids[0] ?? 'x'), method, key: chosen, body }))
    .map(({ path, method, key: chosen, body }) => finish(method, path, body === undefined ? {} : { 'content-type': 'application/json' }, body, chosen, model.find(method === 'HEAD' ? 'GET' : method, path)));
  const unknownPath = fc
    .record({ segments: fc.array(junkText.map(encodeURIComponent), { minLength: 1, maxLength: 3 }), method: fc.constantFrom('GET', 'POST', 'DELETE'), key })
    .map(({ segments, method, key: chosen }) => finish(method, `/v0/${segments.join('/')}`, {}, undefined, chosen, undefined));
  return fc.oneof({ weight: 16, arbitrary: documented }, { weight: 2, arbitrary: wrongMethod }, { weight: 1, arbitrary: unknownPath });
}

function finish(method: string, path: string, headers: Record<string, string>, body: string | undefined, key: FuzzKey, operation: Operation | undefined): FuzzRequest {
  const all = { ...headers };
  if (key.authorization !== null) all.authorization = key.authorization;
  // HEAD and GET cannot carry a body through fetch.
  return { method, path, headers: all, body: method === 'GET' || method === 'HEAD' ? undefined : body, key, operation };
}

function pathOf(op: Operation, hints: Hints): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'path');
  const values = params.map(() =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...hints.ids) },
      { weight: 2, arbitrary: fc.uuid() },
      { weight: 2, arbitrary: junkText.map(encodeURIComponent) },
      { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '%2e%2e', '%00') }, // escapes a URL parser must refuse or decode
    ),
  );
  return fc.tuple(...values).map((chosen) => params.reduce((path, param, index) => path.replace(`{${param.name}}`, chosen[index] as string), op.path));
}

function queryOf(op: Operation, model: OpenApiModel, hints: Hints): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'query');
  const pairs = params.map((param) =>
    fc.option(fc.oneof({ weight: 3, arbitrary: valueOf(param.schema, model, hints, param.name).map(String) }, { weight: 1, arbitrary: junkText }), { nil: undefined, freq: 2 }),
  );
  const extra = rarely(fc.tuple(junkText, junkText), 8);
  return fc.tuple(fc.tuple(...pairs), extra).map(([values, unknown]) => {
    const query = new URLSearchParams();
    params.forEach((param, index) => values[index] !== undefined && query.append(param.name, values[index]));
    if (unknown) query.append(unknown[0], unknown[1]);
    const text = query.toString();
    return text === '' ? '' : `?${text}`;
  });
}

function headersOf(op: Operation, model: OpenApiModel, hints: Hints): fc.Arbitrary<Record<string, string>> {
  const documented = op.parameters.filter((p) => p.in === 'header');
  const headerValue = (param: Parameter): fc.Arbitrary<string> => {
    // A matching If-None-Match with a long Prefer: wait would only slow the run down; keep waits short.
    if (param.name === 'prefer') return fc.constantFrom('wait=0', 'wait=1', 'wait=-1', 'wait=abc', 'wait=1.5', 'respond-async', '');
    return fc.oneof(valueOf(param.schema, model, hints, param.name), junkText).map((value) => printable(String(value)));
  };
  const entries = documented.map((param) => fc.option(headerValue(param), { nil: undefined }));
  const contentType = rarely(
    fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/problem+json', 'multipart/form-data'),
    8,
  );
  const cookie = rarely(fc.constantFrom('runset_session=nope', 'runset_session=', 'other=1'), 10);
  const csrf = rarely(junkText.map(printable), 10);
  return fc.record({ values: fc.tuple(...entries), contentType, cookie, csrf }).map(({ values, contentType: type, cookie: jar, csrf: token }) => {
    const headers: Record<string, string> = {};
    documented.forEach((param, index) => values[index] !== undefined && (headers[param.name] = values[index]));
    if (op.body !== undefined) headers['content-type'] = 'application/json';
    if (type !== undefined) headers['content-type'] = type;
    if (jar !== undefined) headers.cookie = jar;
    if (token !== undefined) headers['x-csrf-token'] = token;
    return headers;
  });
}

function bodyOf(op: Operation, model: OpenApiModel, hints: Hints): fc.Arbitrary<string | undefined> {
  const broken = fc.oneof(fc.json(), fc.string({ maxLength: 60 }), fc.constant(''), fc.constant('{"env":'), fc.constant('{"__proto__":{"x":1}}'));
  if (op.body === undefined) return rarely(broken, 4);
  return fc.oneof({ weight: 5, arbitrary: valueOf(op.body, model, hints).map((value) => JSON.stringify(value)) }, { weight: 2, arbitrary: broken });
}

/** A value valid against `schema` (mostly), biased towards the hints for known property names. */
export function valueOf(schema: Schema, model: OpenApiModel, hints: Hints, name?: string): fc.Arbitrary<unknown> {
  const resolved = model.resolve(schema);
  if (resolved.const !== undefined) return fc.constant(resolved.const);
  if (resolved.enum) return fc.constantFrom(...resolved.enum);
  const union = resolved.anyOf ?? resolved.oneOf;
  if (union) return fc.oneof(...union.map((branch) => valueOf(branch, model, hints, name)));
  const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type;
  switch (type) {
    case 'string': {
      const hinted = name !== undefined ? hints.strings[name] : undefined;
      const free = resolved.format === 'uuid' ? fc.uuid() : fc.string({ minLength: resolved.minLength ?? 0, maxLength: Math.min(resolved.maxLength ?? 40, 40) });
      return hinted && hinted.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...hinted) }, { weight: 1, arbitrary: free }) : free;
    }
    case 'integer':
      return fc.integer({ min: resolved.minimum ?? -10, max: Math.min(resolved.maximum ?? 1000, 1000) });
    case 'number':
      return fc.double({ min: resolved.minimum ?? -10, max: resolved.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(resolved.items ? valueOf(resolved.items, model, hints) : fc.jsonValue(), { maxLength: 3 });
    case 'object':
      return objectOf(resolved, model, hints);
    default:
      return fc.jsonValue();
  }
}

function objectOf(schema: Schema, model: OpenApiModel, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const fixed = fc.tuple(
    ...properties.map(([name, child]) => (required.has(name) ? valueOf(child, model, hints, name) : fc.option(valueOf(child, model, hints, name), { nil: undefined, freq: 2 }))),
  );
  const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  const mapKey = hints.mapKeys.length > 0 ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...hints.mapKeys) }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }) : fc.string({ maxLength: 12 });
  const more = extra ? fc.dictionary(mapKey, valueOf(extra, model, hints, 'mapValue'), { maxKeys: 3 }) : fc.constant({});
  return fc.tuple(fixed, more).map(([values, rest]) => {
    const object: Record<string, unknown> = { ...rest };
    properties.forEach(([name], index) => values[index] !== undefined && (object[name] = values[index]));
    return object;
  });
}

/** `arbitrary` once in `oneIn` draws, else undefined. */
function rarely<T>(arbitrary: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}

/** Header values must be printable: fetch refuses others before sending. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '').trim();
}
