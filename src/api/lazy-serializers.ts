/**
 * Response serializers built on a route's first answer, not at start.
 *
 * Fastify compiles a fast-json-stringify serializer for every response schema
 * of every route when the server starts: about a second of CPU for runset's
 * routes, a third of what `serve` spends before it listens. A process answers
 * a few of its routes in most of its life (the status GET, the worker
 * protocol), and a CI machine starts many short-lived servers, so each
 * serializer is built when its route first answers with that status, by the
 * same library and options (the first answer pays a few milliseconds), and
 * reused from then on.
 *
 * That a schema can be compiled at all is still proven before release: a test
 * builds every route's serializers eagerly (test/unit/lazy-serializers.test.ts).
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/** Fastify's default serializer factory, each serializer built on first use. */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ((doc: unknown) => string) | undefined;
    return (doc: unknown) => (serialize ??= compile(route))(doc);
  };
};
