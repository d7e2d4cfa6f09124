/**
 * RunsetClient: the SDK over the HTTP API. One method per operation, each doing
 * exactly one request (no hidden retries, so a caller keeps control of time);
 * `waitForTestRunSet` is the one loop, and it retries only transient failures.
 */
import type { QuarantineAdded } from '../core/wire-quarantine.js';
import { readEnvironments, readTestSummaries, type Environment, type TestHistorySummary } from './insight.js';
import { readQuarantineAdded, readQuarantineList, type QuarantineEntry, type QuarantineResult } from './quarantine.js';
import { parseDuration } from '../core/duration.js';
import { parseRetryAfter, RunsetApiError } from './errors.js';
import { isRecord, readCancelResult, readCreateResult, readFailing, readProblem, readQueuePlace, readSetPage, readStatus, readTestRuns, readWorkers } from './parse.js';
import { redact } from './redact.js';
import { abortReason } from './retry.js';
import { readSetSuite, readSuiteVersion, readSuiteVersionList, type SetSuite, type SuiteUpload, type SuiteVersion } from './suites.js';
import type { CancelResult, ConditionalStatus, CreateTestRunSetBody, CreateTestRunSetResult, QueuePlace, TestRun, TestRunSetStatus, Worker } from './types.js';
import { pollUntilFinal, type WaitOptions } from './wait.js';

export interface RunsetClientOptions {
  /** The base address, ending in `/api` (seed §1), e.g. `https://runset.example.com/api`. */
  url: string;
  apiKey: string;
  /** Defaults to the global fetch; inject one for tests or proxies. */
  fetch?: typeof globalThis.fetch;
  userAgent?: string;
  /** Limit for one request, answer body included. A request that hits it is a transient failure. Default 30 s. */
  requestTimeout?: number | string;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface ConditionalReadOptions extends RequestOptions {
  /** The `etag` of an earlier answer: the status comes back only if it changed since. */
  etag?: string | null;
  /** With `etag`: how long the server may hold the answer for a change (`Prefer: wait`; the server caps it at 60). */
  waitSeconds?: number;
}

export interface CreateOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`: reuse the same value when retrying one logical
   * create, so a retry after a lost answer does not start a second set.
   */
  idempotencyKey?: string;
}

interface Call<T> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  /** Bytes sent as they are (an archive), instead of `body` as JSON. */
  raw?: { bytes: Uint8Array; contentType: string };
  headers?: Record<string, string>;
  signal?: AbortSignal;
  read: (json: unknown) => T | null;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Added to the request limit for an upload: 50 MB over a slow CI uplink takes minutes, not seconds. */
const UPLOAD_EXTRA_MS = 300_000;
/** Error bodies are shown, never stored: a proxy's HTML page must not flood a log. */
const MAX_DETAIL_CHARS = 300;

export class RunsetClient {
  readonly url: string;
  // An ES private field: it stays out of console.log, util.inspect and JSON.stringify.
  readonly #apiKey: string;
  readonly #fetch: typeof globalThis.fetch;
  readonly #userAgent: string;
  readonly #requestTimeoutMs: number;

  constructor(options: RunsetClientOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.url);
    } catch {
      throw new TypeError('runset client: `url` is not a valid absolute URL (expected the base address ending in /api)');
    }
    if (!options.apiKey) throw new TypeError('runset client: `apiKey` is required');
    this.url = parsed.href.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#userAgent = options.userAgent ?? 'runset-client';
    const timeout = options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.#requestTimeoutMs = typeof timeout === 'string' ? parseDuration(timeout) : timeout;
  }

  /** Seed 4.1. */
  createTestRunSet(body: CreateTestRunSetBody, options: CreateOptions = {}): Promise<CreateTestRunSetResult> {
    const headers: Record<string, string> = options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {};
    return this.#call({ method: 'POST', path: '/v0/test-run-sets', body, headers, signal: options.signal, read: readCreateResult });
  }

  /**
   * Extension: "run again" — a new set with the earlier one's environment,
   * overrides, labels and selection. `{ only: 'failed' }`: only its members that
   * ended FAIL (cancelled ones included), labelled `rerun-of`. Not idempotent:
   * a retry after a lost answer would create a second set.
   */
  rerunTestRunSet(id: string, body: { only?: 'failed' } = {}, options: RequestOptions = {}): Promise<CreateTestRunSetResult> {
    return this.#call({ method: 'POST', path: `${setPath(id)}/rerun`, body, signal: options.signal, read: readCreateResult });
  }

  /** Extension: the newest sets (first page only), of an environment and carrying all of `labels` when given. */
  listTestRunSets(filter: { env?: string; labels?: Readonly<Record<string, string>>; limit?: number } = {}, options: RequestOptions = {}): Promise<TestRunSetStatus[]> {
    const query = new URLSearchParams();
    if (filter.env !== undefined) query.set('env', filter.env);
    for (const [key, value] of Object.entries(filter.labels ?? {})) query.append('label', `${key}:${value}`);
    if (filter.limit !== undefined) query.set('limit', String(filter.limit));
    const path = `/v0/test-run-sets${query.size > 0 ? `?${query.toString()}` : ''}`;
    return this.#call({ method: 'GET', path, signal: options.signal, read: readSetPage });
  }

  /** Seed 4.2. `status` may be a value this client does not know: treat it as "not finished". */
  getTestRunSet(id: string, options: RequestOptions = {}): Promise<TestRunSetStatus> {
    return this.#call({ method: 'GET', path: setPath(id), signal: options.signal, read: readStatus });
  }

  /**
   * Extension: the members of a set. Resolves to null when the server answers
   * 404 — a server without this extension answers 404 for the route, and from
   * the outside that cannot be told apart from an unknown set; a caller that has
   * just read the set with `getTestRunSet` knows it exists.
   */
  async listTestRuns(id: string, options: RequestOptions = {}): Promise<TestRun[] | null> {
    try {
      return await this.#call({ method: 'GET', path: `${setPath(id)}/test-runs`, signal: options.signal, read: readTestRuns });
    } catch (error) {
      if (error instanceof RunsetApiError && error.status === 404) return null;
      throw error;
    }
  }

  /** Extension: the suite version a set runs (`trigger --suite`), from its details; null when it runs the server's own tests or the server does not say. */
  async getTestRunSetSuite(id: string, options: RequestOptions = {}): Promise<SetSuite | null> {
    try {
      const details = await this.#call({ method: 'GET', path: `${setPath(id)}/details`, signal: options.signal, read: (body) => ({ suite: readSetSuite(body) }) });
      return details.suite;
    } catch (error) {
      if (error instanceof RunsetApiError && error.status === 404) return null;
      throw error;
    }
  }

  /**
   * Extension: how many of the set's member ends failed it (a FAIL not
   * quarantined, a cancel, a pass after a retry under failOnFlaky), counted by
   * the server, from its details; null when the server does not say or has no such set.
   */
  async getTestRunSetFailing(id: string, options: RequestOptions = {}): Promise<number | null> {
    try {
      return (await this.#call({ method: 'GET', path: `${setPath(id)}/details`, signal: options.signal, read: (body) => ({ failing: readFailing(body) }) })).failing;
    } catch (error) {
      if (error instanceof RunsetApiError && error.status === 404) return null;
      throw error;
    }
  }

  /** Extension: the environment of a set, from its details; null when the server does not say. Rejects with 404 for no such set. */
  getTestRunSetEnv(id: string, options: RequestOptions = {}): Promise<string | null> {
    return this.#call({ method: 'GET', path: `${setPath(id)}/details`, signal: options.signal, read: (body) => ({ env: isRecord(body) && typeof body.env === 'string' ? body.env : null }) }).then(
      (details) => details.env,
    );
  }

  /** Extension: where the set waits in its environment's queue, from its details; null when it is not queued (or the server does not say). */
  async getQueuePlace(id: string, options: RequestOptions = {}): Promise<QueuePlace | null> {
    return this.#call({ method: 'GET', path: `${setPath(id)}/details`, signal: options.signal, read: (body) => ({ queue: readQueuePlace(body) }) }).then((d) => d.queue);
  }

  /**
   * Extension: cancels the set — its unfinished members end FAIL with the error
   * `cancelled`, and so does the set. Resolves with its status and whether this
   * call ended it (`cancelled: false`: it had already ended; nothing changed).
   */
  cancelTestRunSet(id: string, options: RequestOptions = {}): Promise<CancelResult> {
    return this.#call({ method: 'POST', path: `${setPath(id)}/cancel`, signal: options.signal, read: readCancelResult });
  }

  /** Extension: the live worker processes and the members each runs. */
  listWorkers(options: RequestOptions = {}): Promise<Worker[]> {
    return this.#call({ method: 'GET', path: '/v0/workers', signal: options.signal, read: readWorkers });
  }

  /** Extension: a stored suite version, or null when the server has none with this id (404). */
  async getSuiteVersion(id: string, options: RequestOptions = {}): Promise<SuiteVersion | null> {
    try {
      return await this.#call({ method: 'GET', path: suitePath(id), signal: options.signal, read: readSuiteVersion });
    } catch (error) {
      if (error instanceof RunsetApiError && error.status === 404) return null;
      throw error;
    }
  }

  /** Extension: every stored suite version, newest first. */
  listSuiteVersions(options: RequestOptions = {}): Promise<SuiteVersion[]> {
    return this.#call({ method: 'GET', path: '/v0/suites', signal: options.signal, read: readSuiteVersionList });
  }

  /**
   * Extension: uploads a suite version's archive under its id (the SHA-256 of
   * `archive`); `created` is false when the server already had it (nothing was
   * stored twice). `name` points that name at it too.
   */
  async uploadSuiteVersion(id: string, archive: Uint8Array, options: RequestOptions & { commit?: string; name?: string } = {}): Promise<SuiteUpload> {
    const query = new URLSearchParams();
    if (options.commit !== undefined) query.set('commit', options.commit);
    if (options.name !== undefined) query.set('name', options.name);
    const path = `${suitePath(id)}${query.size > 0 ? `?${query.toString()}` : ''}`;
    const call: Call<SuiteVersion> = { method: 'PUT', path, raw: { bytes: archive, contentType: 'application/gzip' }, signal: options.signal, read: readSuiteVersion };
    const request = `PUT ${suitePath(id)}`;
    const { response, text } = await this.#exchange(call, request, UPLOAD_EXTRA_MS);
    return { created: response.status === 201, version: this.#read(call, response, text, request) };
  }

  /** Extension: points `name` (main, pr-123) at a stored version; resolves with the version and its names. */
  nameSuiteVersion(name: string, id: string, options: RequestOptions = {}): Promise<SuiteVersion> {
    return this.#call({ method: 'POST', path: '/v0/suite-names', body: { name, id }, signal: options.signal, read: readSuiteVersion });
  }

  /** Extension: the quarantines in force, of one environment or of every one this key sees. */
  listQuarantine(env?: string, options: RequestOptions = {}): Promise<QuarantineEntry[]> {
    const path = env === undefined ? '/v0/quarantine' : `/v0/quarantine?${new URLSearchParams({ env }).toString()}`;
    return this.#call({ method: 'GET', path, signal: options.signal, read: readQuarantineList });
  }

  /** Extension: quarantines a test (or replaces its quarantine); `until` an ISO time, absent for the server's default. */
  async addQuarantine(entry: { env: string; name: string; reason: string; until?: string }, options: RequestOptions = {}): Promise<QuarantineResult> {
    const call: Call<QuarantineAdded> = { method: 'POST', path: '/v0/quarantine', body: entry, signal: options.signal, read: readQuarantineAdded };
    const request = 'POST /v0/quarantine';
    const { response, text } = await this.#exchange(call, request);
    return { ...this.#read(call, response, text, request), created: response.status === 201 };
  }

  /** Extension: ends a test's quarantine now; rejects with code not_quarantined (404) when it was not. */
  async removeQuarantine(env: string, name: string, options: RequestOptions = {}): Promise<void> {
    const request = 'DELETE /v0/quarantine';
    const call: Call<true> = { method: 'DELETE', path: `/v0/quarantine?${new URLSearchParams({ env, name }).toString()}`, signal: options.signal, read: () => true };
    const { response, text } = await this.#exchange(call, request);
    if (!response.ok) throw this.#httpError(response, text, request);
  }

  /** Extension: the environments this key sees, with their declared variables (a secret one's value is never sent). */
  listEnvironments(options: RequestOptions = {}): Promise<Environment[]> {
    return this.#call({ method: 'GET', path: '/v0/environments', signal: options.signal, read: readEnvironments });
  }

  /** Extension: tests of `env` whose name contains `name`, each with its last 50 outcomes, pass and flaky rates (first page). */
  listTests(env: string, name: string, options: RequestOptions = {}): Promise<TestHistorySummary[]> {
    return this.#call({ method: 'GET', path: `/v0/tests?${new URLSearchParams({ env, name }).toString()}`, signal: options.signal, read: readTestSummaries });
  }

  /** Extension: a text artifact (an error context) by the `url` its member lists (`/api/v0/artifacts/{id}`), as text. */
  async readArtifactText(url: string, options: RequestOptions = {}): Promise<string> {
    const path = url.replace(/^\/api(?=\/)/, '');
    const { response, text } = await this.#exchange({ method: 'GET', path, signal: options.signal, read: () => true }, `GET ${path}`);
    if (response.ok) return text;
    throw this.#httpError(response, text, `GET ${path}`);
  }

  /**
   * Polls until the set is SUCCESS or FAIL and resolves with that status (a FAIL
   * resolves too: it is an answer, not an error). Transient failures are retried
   * with backoff; a final one (401, 403, 404, …) rejects at once; running out of
   * `timeout` rejects with kind `timeout`.
   */
  waitForTestRunSet(id: string, options: WaitOptions = {}): Promise<TestRunSetStatus> {
    return pollUntilFinal((signal, since) => this.getTestRunSetIfChanged(id, { signal, ...since }), id, options);
  }

  /**
   * Seed 4.2 as a conditional request: with `etag` (from an earlier answer), the
   * status comes back only when it is no longer that one (`status: null`: not
   * modified); with `waitSeconds` too, a server that offers it holds the answer
   * until the status changes or that many seconds pass (`waited` says it did).
   * Against a server without ETags, it is the plain read.
   */
  async getTestRunSetIfChanged(id: string, options: ConditionalReadOptions = {}): Promise<ConditionalStatus> {
    const headers: Record<string, string> = {};
    if (options.etag) headers['if-none-match'] = options.etag;
    if (options.etag && options.waitSeconds) headers.prefer = `wait=${Math.ceil(options.waitSeconds)}`;
    const call: Call<TestRunSetStatus> = { method: 'GET', path: setPath(id), headers, signal: options.signal, read: readStatus };
    const request = `${call.method} ${call.path}`;
    const { response, text } = await this.#exchange(call, request, (options.waitSeconds ?? 0) * 1000);
    const etag = response.headers.get('etag');
    const waited = /(^|[\s,])wait=/i.test(response.headers.get('preference-applied') ?? '');
    if (response.status === 304 && options.etag) return { status: null, etag: etag ?? options.etag, waited };
    return { status: this.#read(call, response, text, request), etag, waited };
  }

  async #call<T>(call: Call<T>): Promise<T> {
    const request = `${call.method} ${call.path}`;
    const { response, text } = await this.#exchange(call, request);
    return this.#read(call, response, text, request);
  }

  #read<T>(call: Call<T>, response: Response, text: string, request: string): T {
    if (!response.ok) throw this.#httpError(response, text, request);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const value = json === undefined ? null : call.read(json);
    if (value === null) {
      throw new RunsetApiError({
        kind: 'invalid_response',
        status: response.status,
        code: 'invalid_response',
        title: 'Unexpected response',
        detail: `the body is not the expected JSON shape: ${this.#snippet(text)}`,
        retryAfterMs: null,
        request,
      });
    }
    return value;
  }

  /** One fetch, body read included, under the caller's signal and the per-request limit (plus what the server was asked to wait). */
  async #exchange(call: Call<unknown>, request: string, waitMs = 0): Promise<{ response: Response; text: string }> {
    const controller = new AbortController();
    const onCallerAbort = () => controller.abort();
    call.signal?.addEventListener('abort', onCallerAbort, { once: true });
    if (call.signal?.aborted) controller.abort();
    const timer = setTimeout(() => controller.abort(), this.#requestTimeoutMs + waitMs);
    try {
      const response = await this.#fetch(`${this.url}${call.path}`, {
        method: call.method,
        headers: this.#headers(call),
        // Any Uint8Array is a body to fetch; the DOM types (SDK users' tsconfig) accept only one over an ArrayBuffer, which a Buffer may not be.
        body: call.raw !== undefined ? (call.raw.bytes as Uint8Array<ArrayBuffer>) : call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: controller.signal,
      });
      const text = await response.text();
      return { response, text };
    } catch (cause) {
      // The caller's own reason wins (e.g. the overall deadline), so it can tell its timeout from ours.
      if (call.signal?.aborted) throw abortReason(call.signal);
      const timedOut = controller.signal.aborted;
      throw new RunsetApiError(
        {
          kind: timedOut ? 'request_timeout' : 'network',
          status: null,
          code: timedOut ? 'request_timeout' : 'network_error',
          title: timedOut ? 'No answer in time' : 'Server unreachable',
          detail: timedOut ? `no complete answer within ${this.#requestTimeoutMs} ms` : this.#redact(describeCause(cause)),
          retryAfterMs: null,
          request,
        },
        { cause },
      );
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  #headers(call: Call<unknown>): Record<string, string> {
    return {
      accept: 'application/json, application/problem+json',
      authorization: `Bearer ${this.#apiKey}`,
      'user-agent': this.#userAgent,
      ...(call.raw !== undefined ? { 'content-type': call.raw.contentType } : call.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...call.headers,
    };
  }

  #httpError(response: Response, text: string, request: string): RunsetApiError {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const problem = readProblem(json);
    const retryAfter = response.headers.get('retry-after');
    return new RunsetApiError({
      kind: 'http',
      status: response.status,
      code: problem.code ?? `http_${response.status}`,
      title: this.#redact(problem.title ?? (response.statusText || `HTTP ${response.status}`)),
      detail: problem.detail !== null ? this.#redact(problem.detail) : this.#snippet(text),
      retryAfterMs: parseRetryAfter(retryAfter),
      request,
    });
  }

  #snippet(text: string): string {
    const oneLine = text.replace(/\s+/g, ' ').trim();
    const short = oneLine.length > MAX_DETAIL_CHARS ? `${oneLine.slice(0, MAX_DETAIL_CHARS)}…` : oneLine;
    return this.#redact(short || '(empty body)');
  }

  #redact(text: string): string {
    return redact(text, [this.#apiKey]);
  }
}

function suitePath(id: string): string {
  return `/v0/suites/${encodeURIComponent(id)}`;
}

function setPath(id: string): string {
  return `/v0/test-run-sets/${encodeURIComponent(id)}`;
}

/** undici hides the useful part ("connect ECONNREFUSED …") in `cause`. */
function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${inner}`;
}
