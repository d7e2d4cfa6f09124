/**
 * Turning every failure into an RFC 9457 problem document from the error
 * registry. Nothing else leaves the API: never a stack trace, never a raw
 * framework message without its code.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { problemOf, RunsetError, type ErrorCode, type Problem } from '../core/errors.js';
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

const ACCEPTED_BODY = 'a JSON object {"env": string, "envOverride"?: {string: string}}';

/** A readable sentence for the first schema violation: where, what is wrong, what is accepted. */
function describeValidation(context: string, items: ValidationItem[]): { code: ErrorCode; detail: string } {
  const first = items[0];
  const where = first ? `${context}${first.instancePath.replace(/\//g, '.')}` : context;
  if (context === 'params') return { code: 'invalid_id', detail: 'id must be a UUID such as 3f0e5a4e-2b1c-4d7a-9c1e-8a2b3c4d5e6f' };
  if (context === 'querystring') return { code: 'invalid_query', detail: `${where} ${first?.message ?? 'is invalid'}` };
  if (context === 'headers') return { code: 'invalid_header', detail: `${where} ${first?.message ?? 'is invalid'}` };
  if (!first) return { code: 'invalid_body', detail: `body is invalid; expected ${ACCEPTED_BODY}` };
  if (first.keyword === 'additionalProperties') {
    const field = String(first.params.additionalProperty);
    return { code: 'unknown_field', detail: `${where}: unknown field "${field}"; accepted: ${ACCEPTED_BODY}` };
  }
  return { code: 'invalid_body', detail: `${where} ${first.message ?? 'is invalid'}; expected ${ACCEPTED_BODY}` };
}

const FRAMEWORK_CODES: Record<string, (err: FastifyError) => Problem> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (err) =>
    problemOf('unsupported_media_type', `${err.message.replace(/^Unsupported Media Type:?\s*/i, 'content type ')}; send Content-Type: application/json`),
  FST_ERR_CTP_BODY_TOO_LARGE: () => problemOf('body_too_large', 'request body is larger than 1 MiB (1048576 bytes)'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => problemOf('invalid_json', `body is empty; expected ${ACCEPTED_BODY}`),
  FST_ERR_CTP_INVALID_JSON_BODY: (err) => problemOf('invalid_json', `body is not valid JSON (${err.message}); expected ${ACCEPTED_BODY}`),
};

export function installProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof RunsetError) return sendProblem(reply, err.toProblem());
    if (err.validation) {
      const { code, detail } = describeValidation(err.validationContext ?? 'body', err.validation);
      return sendProblem(reply, problemOf(code, detail));
    }
    const framework = err.code ? FRAMEWORK_CODES[err.code] : undefined;
    if (framework) return sendProblem(reply, framework(err));
    if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
      return sendProblem(reply, problemOf('invalid_json', `body is not valid JSON; expected ${ACCEPTED_BODY}`));
    }
    if (isStoreUnavailable(err)) {
      // A transient store outage (PostgreSQL restarting): say so, and when to retry.
      request.log.warn({ err: err.message }, 'store unavailable');
      reply.header('Retry-After', '2');
      return sendProblem(reply, problemOf('store_unavailable', 'the store cannot be reached right now (is PostgreSQL restarting?); retry in a few seconds'));
    }
    request.log.error({ err }, 'unhandled error');
    return sendProblem(reply, problemOf('internal', 'the server failed to answer; see its log for details'));
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, problemOf('not_found', `no route ${request.method} ${request.url.split('?')[0]}; the API is described at /api/openapi.json`)),
  );
}
