/**
 * Response serializers built on a route's first answer, and request validators
 * on a route's first request, not at start.
 *
 * Fastify compiles a fast-json-stringify serializer for every response schema
 * of every route when the server starts: about a second of CPU for runset's
 * routes, a third of what `serve` spends before it listens. A process answers
 * a few of its routes in most of its life (the status GET, the worker
 * protocol), and a CI machine starts many short-lived servers, so each
 * serializer is built when its route first answers with that status, by the
 * same library and options (the first answer pays a few milliseconds), and
 * reused from then on. Validators the same: Ajv compiling every route's body,
 * params, query and headers schemas was another 0.3 s of each start.
 *
 * That a schema can be compiled at all is still proven before release: a test
 * builds every route's serializers and validators eagerly
 * (test/unit/lazy-compilers.test.ts).
 */
import { AjvCompiler, SerializerSelector } from '../core/fastify.js';

type ValidatorFactory = ReturnType<typeof AjvCompiler>;

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/** One selector each, as Fastify's defaults: it reuses its compiler for the same shared schemas (every plugin asks again). */
const serializerSelector = SerializerSelector();
const validatorSelector = AjvCompiler();

/** Fastify's default serializer factory, each serializer built on first use. */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  let compile: ReturnType<SerializerFactory> | undefined;
  return (route) => {
    let serialize: ((doc: unknown) => string) | undefined;
    return (doc: unknown) => (serialize ??= (compile ??= serializerSelector(externalSchemas, options))(route))(doc);
  };
};

type Validate = ((data: unknown) => unknown) & { errors?: unknown };

type RouteSchema = Parameters<ReturnType<ValidatorFactory>>[0];
type PropertySchema = Record<string, unknown>;

/**
 * A headers schema no request can fail: headers named only to be documented,
 * each optional, a plain string (Node hands every request header as a string),
 * extra headers allowed. Its validator would only cost each request (the
 * status GET's `If-None-Match` and `Prefer`: bench:status).
 */
function acceptsEveryRequest(route: RouteSchema): boolean {
  const { schema, httpPart } = route as unknown as {
    httpPart: string;
    schema: { type?: unknown; required?: unknown[]; additionalProperties?: unknown; properties?: Record<string, PropertySchema> };
  };
  if (httpPart !== 'headers' || schema.type !== 'object' || (schema.required?.length ?? 0) > 0 || schema.additionalProperties === false) return false;
  return Object.values(schema.properties ?? {}).every((p) => p.type === 'string' && Object.keys(p).every((k) => k === 'type' || k === 'description'));
}

const ACCEPT = (() => true) as unknown as ReturnType<ReturnType<ValidatorFactory>>;

/** Fastify's default validator factory (Ajv, the server's `ajv` options), each validator compiled on first use. */
export const lazyValidators: ValidatorFactory = (externalSchemas, options) => {
  // The Ajv instance too (a third of a second with runset's shared schemas), at the first validation.
  let compile: ReturnType<ValidatorFactory> | undefined;
  return (route) => {
    if (acceptsEveryRequest(route)) return ACCEPT;
    let validate: Validate | undefined;
    // Fastify reads a failed validation's `errors` from the function it was given: this one.
    const lazy: Validate = (data) => {
      validate ??= (compile ??= validatorSelector(externalSchemas, options))(route) as Validate;
      const result = validate(data);
      lazy.errors = validate.errors;
      return result;
    };
    return lazy as ReturnType<ReturnType<ValidatorFactory>>;
  };
};
