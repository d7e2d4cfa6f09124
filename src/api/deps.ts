/**
 * What the HTTP API is built from (buildApp's collaborators), apart from
 * buildApp itself so that every route file can name it without importing the
 * app that registers the routes.
 */
import type { onResponseHookHandler } from 'fastify';
import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import type { SuiteConfig } from '../config/suite.js';
import type { KeyAuthenticator } from '../auth/keys.js';
import type { ArtifactBlobStore, SuiteArchiveStore } from '../artifacts/blobs.js';
import type { SetCreationLimit, SignInLimit } from './rate-limit.js';

export interface AppDeps {
  store: Store;
  /** The current suite config (a function: the config can be reloaded). */
  suite: () => SuiteConfig;
  auth: KeyAuthenticator;
  secretKey: Buffer;
  logger: Logger;
  /** Sets one key may create per minute, across every route that creates one. */
  setLimit: SetCreationLimit;
  /** Sign-in attempts one client address may make per minute (POST /api/v0/session); default DEFAULTS.signInsPerMinute. */
  signInLimit?: SignInLimit;
  /** A worker silent for longer than this is not listed by GET /workers (see src/scheduler/registration.ts). */
  workerStaleMs: number;
  /** Where artifact bytes are read from; without it artifact downloads answer 404. */
  artifacts?: ArtifactBlobStore;
  /** Where suite versions' archives are (src/core/suites.ts): kept apart from artifacts' bytes; without it no archive is served (404). */
  suiteArchives?: SuiteArchiveStore;
  /** Told of every authorised worker protocol request: while HTTP workers are attached, this process reaps expired leases (src/worker-link/reaper.ts). */
  onWorkerRequest?: () => void;
  /** The dashboard's address as people open it (--public-url): the base of the links the MCP endpoint's answers carry; without it, the address the agent called. */
  publicUrl?: string;
  /** Told of every answered request (the metrics); without it no hook is installed, and requests pay nothing. */
  onResponse?: onResponseHookHandler;
}
