/**
 * Turning every failure into an RFC 9457 problem document from the error
 * registry. Nothing else leaves the API: never a stack trace, never a raw
 * framework message without its code.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { echo, problemOf, RunsetError, type ErrorCode, type Problem } from '../core/errors.js';
import { isStoreUnavailable } from '../store/store.js';

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  if (problem.status === 401) reply.header('WWW-Authenticate', 'Bearer realm="runset"');
  return reply.code(problem.status).type('application/problem+json').send(problem);
}

interface ValidationItem {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** What the create body accepts, in words (its labels' rules are not in the field names). */
const CREATE_BODY =
  'a JSON object {"env": string, "envOverride"?: {string: string}, "labels"?: {string: string}, "suite"?: string, ' +
  '"select"?: {"tags"?: [string], "grep"?: string, "grepInvert"?: string, "names"?: [string], "projects"?: [string]}} ' +
  '(labels: at most 20, keys of 1-64 a-z, 0-9, "_", "." and "-", values of at most 256 characters; select: patterns of at most 256 characters, lists of at most 100 tags or projects and 1000 names)';

/** The properties a route's schema declares for one part of the request, with their descriptions. */
type PartSchema = { properties?: Record<string, { description?: string; format?: string }>; required?: string[]; $ref?: string } | undefined;

/**
 * What a route's body accepts: the create body in words, any other its
 * schema's fields (`name?` when optional), so the worker protocol's or a key's
 * body errors name their own fields, not the create body's.
 */
function acceptedBody(request: FastifyRequest): string {
  if (request.method === 'POST' && request.routeOptions.url === '/api/v0/test-run-sets') return CREATE_BODY;
  let schema = (request.routeOptions.schema as Record<string, PartSchema> | undefined)?.body;
  if (schema?.$ref) schema = request.server.getSchema(schema.$ref.replace(/#$/, '')) as PartSchema;
  const fields = Object.keys(schema?.properties ?? {});
  if (fields.length === 0) return 'a JSON object';
  const required = new Set(schema?.required ?? []);
  return `a JSON object {${fields.map((f) => (required.has(f) ? f : `${f}?`)).join(', ')}}`;
}

/**
 * A query parameter or header: which one is wrong or unknown, and what the
 * route's schema accepts (its parameter names, or the parameter's description).
 */
function describeNamed(context: 'querystring' | 'headers', first: ValidationItem | undefined, schema: PartSchema): string {
  const what = context === 'querystring' ? 'query parameter' : 'header';
  const declared = Object.keys(schema?.properties ?? {});
  if (first?.keyword === 'additionalProperties') {
    return `unknown ${what} "${echo(String(first.params.additionalProperty))}"; accepted: ${declared.join(', ') || 'none'}`;
  }
  // A missing required one has no path of its own: the schema names it.
  const missing = first?.params.missingProperty;
  const name = first?.instancePath.replace(/^\//, '').split('/')[0] || (typeof missing === 'string' ? missing : '');
  const expected = schema?.properties?.[name]?.description;
  return `${what} ${name || context} ${first?.message ?? 'is invalid'}${expected ? `; expected: ${expected}` : ''}`;
}

/** A malformed path id: what this route's id is (a suite version's is SHA-256 hex), a UUID unless its schema says otherwise. */
function describeParam(first: ValidationItem | undefined, schema: PartSchema): string {
  const name = first?.instancePath.replace(/^\//, '').split('/')[0] || 'id';
  const declared = schema?.properties?.[name];
  if (declared?.description && declared.format !== 'uuid') return `${name} is malformed; expected ${declared.description}`;
  return `${name} must be a UUID such as 3f0e5a4e-2b1c-4d7a-9c1e-8a2b3c4d5e6f`;
}

/** A readable sentence for the first schema violation: where, what is wrong, what is accepted. */
function describeValidation(context: string, items: ValidationItem[], schema: PartSchema, accepted: () => string): { code: ErrorCode; detail: string } {
  const first = items[0];
  if (context === 'params') return { code: 'invalid_id', detail: describeParam(first, schema) };
  if (context === 'querystring') return { code: 'invalid_query', detail: describeNamed(context, first, schema) };
  if (context === 'headers') return { code: 'invalid_header', detail: describeNamed(context, first, schema) };
  if (!first) return { code: 'invalid_body', detail: `body is invalid; expected ${accepted()}` };
  const where = `${context}${first.instancePath.replace(/\//g, '.')}`;
  if (first.keyword === 'additionalProperties') {
    const field = echo(String(first.params.additionalProperty));
    return { code: 'unknown_field', detail: `${where}: unknown field "${field}"; accepted: ${accepted()}` };
  }
  return { code: 'invalid_body', detail: `${where} ${first.message ?? 'is invalid'}; expected ${accepted()}` };
}

const FRAMEWORK_CODES: Record<string, (err: FastifyError, request: FastifyRequest) => Problem> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (_err, request) => {
    const sent = request.headers['content-type'];
    const what = sent ? `content type "${echo(sent)}" is not accepted` : 'the body has no Content-Type';
    // A route taking other bodies than JSON (a suite archive) says which in its schema's `consumes`.
    const consumes = (request.routeOptions.schema as { consumes?: string[] } | undefined)?.consumes ?? ['application/json'];
    return problemOf('unsupported_media_type', `${what}; send Content-Type: ${consumes.join(' or ')}`);
  },
  FST_ERR_CTP_BODY_TOO_LARGE: () => problemOf('body_too_large', 'request body is larger than 1 MiB (1048576 bytes)'),
  FST_ERR_CTP_EMPTY_JSON_BODY: (_err, request) => problemOf('invalid_json', `body is empty; expected ${acceptedBody(request)}`),
  FST_ERR_CTP_INVALID_JSON_BODY: (err, request) => problemOf('invalid_json', `body is not valid JSON (${echo(err.message)}); expected ${acceptedBody(request)}`),
};

export function installProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof RunsetError) return sendProblem(reply, err.toProblem());
    if (err.validation) {
      const context = err.validationContext ?? 'body';
      const schema = (request.routeOptions.schema as Record<string, PartSchema> | undefined)?.[context];
      const { code, detail } = describeValidation(context, err.validation, schema, () => acceptedBody(request));
      return sendProblem(reply, problemOf(code, detail));
    }
    const framework = err.code ? FRAMEWORK_CODES[err.code] : undefined;
    if (framework) return sendProblem(reply, framework(err, request));
    if (isStoreUnavailable(err)) {
      // A transient store outage (PostgreSQL restarting): say so, and when to retry.
      request.log.warn({ err: err.message }, 'store unavailable');
      reply.header('Retry-After', '2');
      return sendProblem(reply, problemOf('store_unavailable', 'the store cannot be reached right now (is PostgreSQL restarting?); retry in a few seconds'));
    }
    if (clientWentAway(err, request)) {
      // Nobody is left to answer, and it is the client's doing, not a fault of ours.
      request.log.debug({ code: err.code }, 'client went away before the request was read');
      return sendProblem(reply, problemOf('malformed_request', 'the request ended before its body did'));
    }
    request.log.error({ err }, 'unhandled error');
    return sendProblem(reply, problemOf('internal', 'the server failed to answer; see its log for details'));
  });
}

/** The client aborted mid-request (closed the connection before its body ended). */
function clientWentAway(err: FastifyError, request: FastifyRequest): boolean {
  return (err.code === 'ECONNRESET' || err.code === 'ECONNABORTED') && request.raw.destroyed;
}
