/**
 * buildApp: the HTTP API as a Fastify instance, from its collaborators. It
 * never listens by itself (tests use inject() or listen on port 0).
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import { LIMITS, ProblemSchema } from '../core/wire.js';
import type { Store } from '../store/store.js';
import type { SuiteConfig } from '../config/suite.js';
import type { KeyAuthenticator } from '../auth/keys.js';
import { installProblemHandlers } from './problems.js';
import { requireKey } from './auth.js';
import { testRunSetRoutes } from './routes/test-run-sets.js';
import { openApiRoute, OPENAPI_INFO } from './routes/openapi.js';

export interface AppDeps {
  store: Store;
  /** The current suite config (a function: the config can be reloaded). */
  suite: () => SuiteConfig;
  auth: KeyAuthenticator;
  secretKey: Buffer;
  logger: Logger;
  /** Sets one key may create per minute. */
  setsPerMinute: number;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    // pino's own Logger type and Fastify's view of it differ only in generics.
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    disableRequestLogging: true,
    bodyLimit: LIMITS.bodyBytes,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false } },
  });

  // JSON only: Fastify also parses text/plain by default, which would let a
  // non-JSON body reach validation instead of answering 415.
  app.removeContentTypeParser('text/plain');
  installProblemHandlers(app);
  app.addSchema(ProblemSchema);
  await app.register(swagger, { openapi: OPENAPI_INFO });

  await app.register(
    async (api) => {
      api.get('/openapi.json', { schema: { hide: true } }, openApiRoute(app));
      await api.register(async (v0) => {
        v0.addHook('onRequest', requireKey(deps.auth));
        await v0.register(testRunSetRoutes, { deps });
      }, { prefix: '/v0' });
    },
    { prefix: '/api' },
  );
  return app;
}
