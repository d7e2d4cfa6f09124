/**
 * Delivers webhooks from the store's outbox. Every process that serves the API
 * runs one: each tick it fans new set events out into deliveries (one per
 * matching webhook), then leases the due deliveries and posts them. The store
 * hands each event and each attempt to exactly one process, so several API
 * processes on one PostgreSQL deliver once; a delivery whose process died
 * mid-attempt comes back when its lease runs out.
 *
 * Code hosts (./code-hosts/) are delivery targets too: a set with a commit
 * label gets a `github:check-run` or `gitlab:commit-status` delivery per event,
 * through the same leases, retries and records. A set's code-host deliveries
 * are attempted one after the other (start before end), so two attempts never
 * race to create its check run.
 *
 * Delivery is at least once: a receiver that answered but whose answer was
 * never recorded (a crash in between) gets the same `Runset-Delivery` id again,
 * which is what receivers deduplicate on.
 */
import type { Logger } from 'pino';
import type { DueDelivery, SetEvent, WebhookConfig } from '../core/webhooks.js';
import type { VariableValue } from '../core/types.js';
import type { Store } from '../store/store.js';
import { renderBody } from './payload.js';
import { DEFAULT_RETRY, nextRetryMs, type RetryPolicy } from './retry.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';
import type { Dispatcher } from 'undici';
import { outboundDispatcher, outboundRefusalIn, undici, type OutboundOptions } from '../net/outbound.js';
import { SET_EVENTS, WEBHOOK_OUTBOUND_POLICY, webhookWants } from '../core/webhooks.js';
import { isCodeHostTarget, type CodeHostTarget } from '../core/code-hosts.js';
import type { CodeHostAttempt, CodeHostReports } from './code-hosts/index.js';
import type { RetryAdvice } from './code-hosts/http.js';

/** Posts a delivery; the default is fetch (through the outbound address rules, see main.ts). */
export type PostWebhook = (url: string, init: { body: string; headers: Record<string, string>; signal: AbortSignal }) => Promise<{ status: number }>;

export interface DispatcherOptions {
  store: Store;
  /** The webhooks of the current config (it can be reloaded). */
  webhooks: () => readonly WebhookConfig[];
  /** The dashboard page of a set. */
  setUrl: (setId: string) => string;
  logger: Logger;
  post: PostWebhook;
  env?: NodeJS.ProcessEnv;
  /** Reports sets with a commit label on GitHub or GitLab; absent: none are. */
  codeHosts?: CodeHostReports;
  retry?: RetryPolicy;
  pollMs?: number;
  timeoutMs?: number;
}

/**
 * Posts with undici's fetch through the outbound address rules (src/net/outbound.ts):
 * never link-local or cloud metadata, checked after DNS on every connection;
 * private addresses are allowed, since an operator, not a client, chose the
 * receiver. A redirect is an answer, not followed (a receiver that moved is a
 * config to fix).
 */
export function outboundPost(options: OutboundOptions = {}): PostWebhook {
  // Made at the first delivery: a server with no webhook never loads undici.
  let dispatcher: Dispatcher | undefined;
  return async (url, init) => {
    dispatcher ??= outboundDispatcher(WEBHOOK_OUTBOUND_POLICY, options);
    const response = await undici().fetch(url, { method: 'POST', redirect: 'manual', dispatcher, ...init });
    await response.body?.cancel();
    return { status: response.status };
  };
}

const FAN_OUT_BATCH = 100;
const CLAIM_BATCH = 8;
const USER_AGENT = 'runset-webhooks/1';

/** A failure the receiver cannot help: retried like any other, but said plainly. */
class DeliveryProblem extends Error {}

const RETRY_WITH_BACKOFF: RetryAdvice = Object.freeze({ kind: 'backoff', afterMs: 0 });

/**
 * Due deliveries as turns attempted side by side: a webhook's delivery alone,
 * a set's deliveries to one code host together, its start before its end.
 */
function inTurns(due: readonly DueDelivery[]): DueDelivery[][] {
  const turns = new Map<string, DueDelivery[]>();
  for (const delivery of due) {
    const key = isCodeHostTarget(delivery.webhook) ? `${delivery.webhook} ${delivery.setId}` : delivery.id;
    turns.set(key, [...(turns.get(key) ?? []), delivery]);
  }
  return [...turns.values()].map((turn) => turn.sort((a, b) => SET_EVENTS.indexOf(a.event) - SET_EVENTS.indexOf(b.event)));
}

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly pollMs: number;
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;

  constructor(private readonly opts: DispatcherOptions) {
    this.pollMs = opts.pollMs ?? 1_000;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.retry = opts.retry ?? DEFAULT_RETRY;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.pollMs);
    this.timer.unref();
    void this.tick();
  }

  /** Stops ticking and waits for the attempts under way (each bounded by the timeout). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One round: fan out, then deliver what is due. Ticks never overlap. */
  tick(): Promise<void> {
    this.running ??= this.round()
      .catch((err: unknown) => this.opts.logger.warn({ err }, 'webhook delivery round failed; trying again next tick'))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async round(): Promise<void> {
    const route = (event: SetEvent) => this.route(event);
    while ((await this.opts.store.webhooks.fanOut(route, FAN_OUT_BATCH)) === FAN_OUT_BATCH);
    for (;;) {
      const due = await this.opts.store.webhooks.claimDue(CLAIM_BATCH, this.timeoutMs + 5_000);
      await Promise.all(inTurns(due).map(async (turn) => {
        for (const delivery of turn) await this.attempt(delivery);
      }));
      if (due.length < CLAIM_BATCH || !this.timer) return;
    }
  }

  private route(event: SetEvent): string[] {
    const hooks = this.opts
      .webhooks()
      .filter((hook) => webhookWants(hook, event))
      .map((hook) => hook.name);
    return [...hooks, ...(this.opts.codeHosts?.targets(event) ?? [])];
  }

  private async attempt(delivery: DueDelivery): Promise<void> {
    const { logger } = this.opts;
    const log = { delivery: delivery.id, webhook: delivery.webhook, set: delivery.setId, event: delivery.event, attempt: delivery.attempts + 1 };
    const started = performance.now();
    const target = delivery.webhook;
    const sent = isCodeHostTarget(target) ? await this.reportOnCodeHost(delivery, target) : await this.postWebhook(delivery);
    const delivered = sent.error === null;
    const backoff = delivered || sent.retry.kind === 'never' ? null : nextRetryMs(this.retry, delivery.attempts + 1, delivery.ageMs);
    // A host that names when to come back (a rate limit's retry-after) is not asked sooner.
    const retryInMs = backoff === null || sent.retry.kind === 'never' ? null : Math.max(backoff, sent.retry.afterMs);
    const durationMs = Math.round(performance.now() - started);
    const { statusCode, error, body } = sent;
    const recorded = await this.opts.store.webhooks.recordAttempt(delivery, { delivered, statusCode, error, durationMs, retryInMs, body });
    if (!recorded) logger.warn(log, 'webhook attempt outlived its lease; another process may try it again');
    else if (delivered) logger.info({ ...log, statusCode, durationMs }, 'webhook delivered');
    else logger.warn({ ...log, statusCode, error, retryInMs }, retryInMs === null ? 'webhook delivery given up' : 'webhook delivery failed; will retry');
  }

  private async postWebhook(delivery: DueDelivery): Promise<CodeHostAttempt> {
    const hook = this.opts.webhooks().find((h) => h.name === delivery.webhook);
    let body = delivery.body ?? '';
    let statusCode: number | null = null;
    try {
      if (!hook) return { statusCode, error: `webhook "${delivery.webhook}" is no longer in the config`, retry: { kind: 'never' }, body };
      body = delivery.body ?? (await this.render(delivery, hook));
      const url = this.resolve(hook.url, 'url');
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'runset-event': delivery.event,
        'runset-delivery': delivery.id,
      };
      if (hook.secret) headers[SIGNATURE_HEADER] = signatureHeader(this.resolve(hook.secret, 'secret'), body, Math.floor(Date.now() / 1000));
      const response = await this.opts.post(url, { body, headers, signal: AbortSignal.timeout(this.timeoutMs) });
      statusCode = response.status;
      const error = statusCode < 200 || statusCode > 299 ? `HTTP ${statusCode}${statusCode >= 300 && statusCode < 400 ? ' (redirects are not followed)' : ''}` : null;
      return { statusCode, error, retry: RETRY_WITH_BACKOFF, body };
    } catch (err) {
      return { statusCode, error: describeFailure(err, this.timeoutMs), retry: RETRY_WITH_BACKOFF, body };
    }
  }

  private async reportOnCodeHost(delivery: DueDelivery, target: CodeHostTarget): Promise<CodeHostAttempt> {
    const reports = this.opts.codeHosts;
    if (!reports) return { statusCode: null, error: `${target}: no code host is configured in this process`, retry: { kind: 'never' }, body: '' };
    try {
      return await reports.deliver(delivery, target, AbortSignal.timeout(this.timeoutMs));
    } catch (err) {
      return { statusCode: null, error: describeFailure(err, this.timeoutMs), retry: RETRY_WITH_BACKOFF, body: '' };
    }
  }

  private async render(delivery: DueDelivery, hook: WebhookConfig): Promise<string> {
    const { store } = this.opts;
    const [set, members, control] = await Promise.all([store.sets.get(delivery.setId), store.sets.listRuns(delivery.setId), store.sets.control(delivery.setId)]);
    if (!set) throw new DeliveryProblem(`test run set ${delivery.setId} no longer exists`);
    const cancelled = control?.cancellation?.error ?? null;
    return renderBody(hook.format, { event: delivery.event, deliveryId: delivery.id, set, members, cancelled, dashboardUrl: this.opts.setUrl(set.id) });
  }

  /** A webhook's url or secret in clear, read from this process's environment when it is a reference. */
  private resolve(value: VariableValue, what: string): string {
    if (value.kind === 'plain') return value.value;
    const found = value.kind === 'env' ? (this.opts.env ?? process.env)[value.name] : undefined;
    if (found === undefined || found === '') throw new DeliveryProblem(`the webhook's ${what} reads \${env:${value.kind === 'env' ? value.name : '?'}}, which is not set in this process's environment`);
    return found;
  }
}

/**
 * One line saying why an attempt failed, never the URL (a Slack webhook's
 * address is itself a secret): fetch's own message hides the cause.
 */
function describeFailure(err: unknown, timeoutMs: number): string {
  if (err instanceof DeliveryProblem) return err.message;
  const error = err as Error & { cause?: Error & { code?: string } };
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
  const refused = outboundRefusalIn(err);
  if (refused) return refused.message;
  const cause = error.cause;
  const detail = cause?.message ?? error.message ?? String(err);
  return detail.split('\n')[0]!.slice(0, 300);
}
