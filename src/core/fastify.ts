/**
 * The one door to Fastify's runtime: the server, its validator and serializer
 * compilers, and @fastify/swagger. Every runtime use (the API, the metrics
 * listener) imports them from here (an ESLint rule says so; type-only imports
 * of `fastify` are free).
 *
 * Why a door: Fastify and what it requires are some 230 CommonJS modules,
 * whose resolving and loading cost each `runset serve` about 0.28 s of CPU.
 * `npm run build` replaces this file's compiled output with one bundle of the
 * same exports (src/core/door-bundles.ts), loaded in about 0.1 s. Without that
 * step this file works as it is, only slower: one Fastify either way, so the
 * compilers given to the server are the ones it knows.
 */
export { default as Fastify, LogController } from 'fastify';
export { default as swagger } from '@fastify/swagger';
export { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
export { AjvCompiler } from '@fastify/ajv-compiler';
