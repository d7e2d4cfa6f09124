/**
 * buildApp: the HTTP API as a Fastify instance, from its collaborators. It
 * never listens by itself (tests use inject() or listen on port 0).
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { Fastify, LogController, swagger } from '../core/fastify.js';
import { LIMITS } from '../core/wire.js';
import { lazyChildLogger } from './request-logger.js';
import { installProblemHandlers } from './problems.js';
import { requireKeyOrSession } from './auth.js';
import { SessionAuthenticator } from '../auth/sessions.js';
import { sessionRoutes } from './routes/session.js';
import { setBrowseRoutes } from './routes/set-browse.js';
import { environmentRoutes } from './routes/environments.js';
import { dashboardRoutes } from '../dashboard/serve.js';
import { testRunSetRoutes } from './routes/test-run-sets.js';
import { componentName, openApiRoute, OPENAPI_INFO } from './routes/openapi.js';
import { SHARED_SCHEMAS } from './routes/common.js';
import { answerClientError, answerFrameworkError, installRouteEdges, MAX_PARAM_LENGTH } from './http-edges.js';
import { healthRoute } from './routes/health.js';
import { artifactRoutes } from './routes/artifacts.js';
import { workerRoutes } from './routes/workers.js';
import { setControlRoutes } from './routes/set-control.js';
import { webhookRoutes } from './routes/webhooks.js';
import { SignInLimit } from './rate-limit.js';
import type { AppDeps } from './deps.js';
import { DEFAULTS } from '../config/options.js';
import { guardRoute } from './permission.js';
import { keyRoutes } from './routes/keys.js';
import { testHistoryRoutes } from './routes/tests.js';
import { suiteRoutes } from './routes/suites.js';
import { quarantineRoutes } from './routes/quarantine.js';
import { workerProtocolRoutes } from './routes/worker-protocol.js';
import { lazySerializers, lazyValidators } from './lazy-compilers.js';
import { mcpRoutes } from './routes/mcp.js';


export interface BuildOptions {
  /** Compile every response serializer and request validator at start (Fastify's default), as the test that proves they all compile does. */
  eagerCompilers?: boolean;
}

export async function buildApp(deps: AppDeps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    // pino's own Logger type and Fastify's view of it differ only in generics.
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    // Requests are not logged one by one (the status GET is the hot path); errors are.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: LIMITS.bodyBytes,
    // Closing is answered 503 shutting_down as problem+json (src/api/http-edges.ts).
    return503OnClosing: false,
    // Fastify 5 reads router settings from routerOptions; at the top level it warns (FSTDEP022) on every start.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false } },
    schemaController: { compilersFactory: options.eagerCompilers ? {} : { buildSerializer: lazySerializers, buildValidator: lazyValidators } },
  });

  // JSON only: Fastify also parses text/plain by default, which would let a
  // non-JSON body reach validation instead of answering 415.
  app.removeContentTypeParser('text/plain');
  // First, so that it sees every request: the API's, the dashboard's, and those no route matched.
  if (deps.onResponse) app.addHook('onResponse', deps.onResponse);
  // Declared up front, so that setting them (src/api/auth.ts) keeps every request
  // object the same shape: adding a property per request made V8 deoptimise the
  // request path, the status GET above all (bench:status).
  app.decorateRequest('apiKey', null);
  app.decorateRequest('dashboardSession', null);
  // server.close() closes the connections idle at that moment; one whose answer
  // leaves later (a waiting status answered 304, a worker's claim or notices
  // ending) would then hold the process for Fastify's keep-alive (72 s). Node
  // reads keepAliveTimeout as each answer ends, so from here on they close at once.
  app.addHook('preClose', (done) => {
    app.server.keepAliveTimeout = 1;
    done();
  });
  installProblemHandlers(app);
  installRouteEdges(app);
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  await app.register(swagger, { openapi: OPENAPI_INFO, refResolver: { buildLocalReference: componentName } });
  // Dashboard sessions live in the store, so every API process shares them.
  const sessions = new SessionAuthenticator(deps.store);

  await app.register(
    async (api) => {
      api.get('/openapi.json', { schema: { hide: true } }, openApiRoute(app));
      await api.register(healthRoute, { store: deps.store });
      await api.register(async (v0) => {
        // Each route's own credential check, its role bound when it is registered (src/api/permission.ts).
        v0.addHook('onRoute', guardRoute((authorize) => requireKeyOrSession(deps.auth, sessions, authorize)));
        await v0.register(testRunSetRoutes, { deps });
        await v0.register(setBrowseRoutes, { deps });
        await v0.register(environmentRoutes, { deps });
        await v0.register(artifactRoutes, { deps });
        await v0.register(workerRoutes, { deps });
        await v0.register(setControlRoutes, { deps });
        await v0.register(keyRoutes, { deps });
        await v0.register(webhookRoutes, { deps });
        await v0.register(testHistoryRoutes, { deps });
        await v0.register(suiteRoutes, { deps });
        await v0.register(quarantineRoutes, { deps });
      }, { prefix: '/v0' });
      // Workers over HTTP: Bearer keys only, with their own key check (role worker or admin).
      await api.register(workerProtocolRoutes, { prefix: '/v0/worker', deps });
      // Coding agents: the MCP server over Streamable HTTP, acting through this API with the caller's key.
      await api.register(mcpRoutes, { deps, root: app });
      // Sign-in/out sit outside the key check: they are how a browser gets its credential.
      await api.register(sessionRoutes, { prefix: '/v0', auth: deps.auth, sessions, signInLimit: deps.signInLimit ?? new SignInLimit(DEFAULTS.signInsPerMinute) });
    },
    { prefix: '/api' },
  );
  await app.register(dashboardRoutes, { sessions });
  return app;
}
