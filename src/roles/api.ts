/**
 * The API role: the HTTP API listening, and the sweeps only API processes run
 * (webhooks, set deadlines, set retention; and, where no worker of this process
 * reaps, the reaper for the workers over HTTP it serves). Any number of API
 * processes may run these at once on one PostgreSQL.
 */
import type { FastifyInstance, onResponseHookHandler } from 'fastify';
import type { Logger } from 'pino';
import { DEFAULTS, kernelSomaxconn, listenBacklog, urlHost, type ServeOptions } from '../config/options.js';
import type { SuiteConfig } from '../config/suite.js';
import type { Store } from '../store/store.js';
import type { ArtifactBlobStore, SuiteArchiveStore } from '../artifacts/blobs.js';
import type { KeyAuthenticator } from '../auth/keys.js';
import { staleAfterMs } from '../scheduler/registration.js';
import { attachedReaper, type AttachedReaper } from '../worker-link/reaper.js';
import { buildApp } from '../api/app.js';
import { SetCreationLimit, SignInLimit } from '../api/rate-limit.js';
import { startDeadlineSweep } from '../sets/deadlines.js';
import { startSetRetention } from '../retention/sets.js';
import { outboundPost, WebhookDispatcher } from '../webhooks/dispatcher.js';
import { DEFAULT_RETRY } from '../webhooks/retry.js';
import { CodeHostReports, outboundRequest } from '../webhooks/code-hosts/index.js';
import { sweep, type Step } from './steps.js';

/**
 * How long after the last worker protocol request an API process keeps reaping:
 * longer than any lease a claim may ask for (MAX lease 1 h), so the members of
 * the last HTTP worker to die still go back.
 */
const HTTP_WORKERS_ATTACHED_MS = 2 * 60 * 60 * 1000;

type ApiSettings = Pick<
  ServeOptions,
  'maxLostLeases' | 'pollMs' | 'setsPerMinute' | 'signInsPerMinute' | 'publicUrl' | 'backlog' | 'port' | 'host' | 'webhookRetryMs' | 'retentionMs'
>;

export interface ApiRoleOptions {
  options: ApiSettings;
  store: Store;
  /** The config of now (SIGHUP reloads it). */
  suite: () => SuiteConfig;
  auth: KeyAuthenticator;
  secretKey: Buffer;
  logger: Logger;
  blobs: ArtifactBlobStore;
  suiteArchives: SuiteArchiveStore;
  /** Workers of this process reap expired leases already; else this process reaps for the HTTP workers it serves. */
  workersReap: boolean;
  /** The metrics' hook on every answer; absent when metrics are off. */
  onResponse?: onResponseHookHandler;
  /** Told of the app once it listens, with the API's base address (ending in /api). */
  onListening(app: FastifyInstance, apiUrl: string): void;
}

/** The API role's steps, in the order they start (stopped the other way: the listener goes first, then the sweeps it feeds). */
export function apiSteps(o: ApiRoleOptions): Step[] {
  const { options, store, logger } = o;
  let reaper: AttachedReaper | undefined;
  let app: FastifyInstance | undefined;
  let dashboard = '';
  return [
    {
      name: 'reaper for HTTP workers',
      setup: () => {
        if (o.workersReap) return;
        reaper = attachedReaper({
          reap: () => store.claims.reapExpired(options.maxLostLeases),
          periodMs: options.pollMs,
          attachedMs: HTTP_WORKERS_ATTACHED_MS,
          logger: logger.child({ component: 'reaper' }),
        });
      },
      teardown: () => reaper?.stop(),
    },
    {
      name: 'API',
      setup: async () => {
        app = await buildApp({
          store,
          suite: o.suite,
          auth: o.auth,
          secretKey: o.secretKey,
          logger,
          setLimit: new SetCreationLimit(options.setsPerMinute),
          signInLimit: options.signInsPerMinute ? new SignInLimit(options.signInsPerMinute) : undefined,
          artifacts: o.blobs,
          suiteArchives: o.suiteArchives,
          workerStaleMs: staleAfterMs(options.pollMs),
          onWorkerRequest: reaper && (() => reaper!.seen()),
          onResponse: o.onResponse,
          publicUrl: options.publicUrl,
        });
      },
      teardown: () => app?.close(),
    },
    {
      // Closing the app (the step before) closes its listener.
      name: 'listening',
      setup: async () => {
        const { backlog, capped } = listenBacklog(options.backlog ?? DEFAULTS.backlog, kernelSomaxconn());
        if (capped) logger.warn({ asked: options.backlog, backlog }, "listen backlog capped by the kernel's net.core.somaxconn: raise it (sysctl) to queue more connections");
        await app!.listen({ port: options.port, host: options.host, backlog });
        const address = app!.server.address();
        const port = typeof address === 'object' && address ? address.port : options.port;
        const host = urlHost(options.host);
        dashboard = options.publicUrl ?? `http://${host}:${port}`;
        o.onListening(app!, `http://${host}:${port}/api`);
      },
    },
    webhooksStep(o, () => dashboard),
    sweep('deadline sweep', () => startDeadlineSweep({ store, logger: logger.child({ component: 'deadlines' }) })),
    // Any number of API processes may sweep old sets (see src/store/postgres/retention.ts); workers only run tests.
    sweep('set retention', () => startSetRetention({ store, blobs: o.blobs, suiteArchives: o.suiteArchives, givenMs: options.retentionMs, logger: logger.child({ component: 'retention' }) })),
  ];
}

/** The webhook dispatcher: set events out to webhooks and code hosts, with links to the dashboard at `dashboard()`. */
function webhooksStep(o: ApiRoleOptions, dashboard: () => string): Step {
  let webhooks: WebhookDispatcher | undefined;
  return {
    name: 'webhooks',
    setup: () => {
      const setUrl = (setId: string) => `${dashboard()}/sets/${setId}`;
      webhooks = new WebhookDispatcher({
        store: o.store,
        webhooks: () => o.suite().webhooks,
        codeHosts: new CodeHostReports({ store: o.store, config: () => o.suite().codeHosts, request: outboundRequest(), setUrl }),
        setUrl,
        logger: o.logger.child({ component: 'webhooks' }),
        post: outboundPost(),
        retry: { ...DEFAULT_RETRY, firstDelayMs: o.options.webhookRetryMs ?? DEFAULT_RETRY.firstDelayMs },
      });
      webhooks.start();
    },
    teardown: () => webhooks?.stop(),
  };
}
