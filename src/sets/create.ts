/**
 * Making a set: the one use case behind every request that makes one — create
 * (POST /test-run-sets, `runset trigger`, the MCP tools through it) and run
 * again / rerun of failures (POST /test-run-sets/{id}/rerun). Whichever asks,
 * a set is planned against the config of now (or the suite version it runs)
 * with its environment's duration history and quarantine, spends one of the
 * key's set creations, is stored, wakes the workers, and supersedes the older
 * unfinished sets of its concurrency group. Routes parse, authorize, call one
 * of these and shape the answer.
 */
import { createHash } from 'node:crypto';
import { echo, RunsetError } from '../core/errors.js';
import type { NewTestRunSet, TestRunSetRecord, TestSelection } from '../core/types.js';
import type { CreateTestRunSetBody } from '../core/wire.js';
import type { SuiteConfig } from '../config/suite.js';
import type { IdempotencyClaim, Store } from '../store/store.js';
import { planTestRunSet, type PlanOptions } from './plan.js';
import { failedNames, planRerun, planRerunOfFailures, type EarlierSet } from './rerun.js';
import { hasPatterns } from './select.js';
import { setSource } from './suite-source.js';
import { supersedeOlder } from './supersede.js';

/** How long an Idempotency-Key names the set it created. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface SetLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** Who makes a set, and with what. */
export interface SetMaker {
  store: Store;
  /** The config of now (a reload changes it between requests). */
  suite: SuiteConfig;
  secretKey: Buffer;
  /** The key making the set; null on a server without keys. */
  keyId: string | null;
  /** Spends one of the key's set creations (the API's sets-per-minute); throws when none is left. */
  spend(): void;
  log: SetLog;
}

/** One set to make: where it runs, what it selects, and how it is planned once its source and history are read. */
interface Making {
  env: string;
  /** The suite version (an id or a published name) it runs; absent: the server's own tests. */
  suite?: string;
  select: TestSelection | null | undefined;
  plan(suite: SuiteConfig, opts: PlanOptions): NewTestRunSet;
  /** Create it once per Idempotency-Key. */
  once?: IdempotencyClaim;
  /** What the creation's log line says beyond the set, its environment and members. */
  log: { fields: object; message: string };
}

/** Makes a set from a create request; with an Idempotency-Key, a repeat gets the set the key made (422 with another body). */
export async function createSet(maker: SetMaker, body: CreateTestRunSetBody, idempotencyKey?: string): Promise<string> {
  let once: IdempotencyClaim | undefined;
  if (idempotencyKey !== undefined) {
    once = { keyId: maker.keyId ?? '', key: idempotencyKey, bodyHash: hashBody(body), ttlMs: IDEMPOTENCY_TTL_MS };
    // A replay (a CI job retrying) gets its set back as it was: it does not
    // spend the key's budget, and a config edited since cannot refuse it.
    const earlier = await maker.store.sets.findCreatedOnce(once.keyId, once.key);
    if (earlier) return replay(earlier, once);
  }
  return makeSet(maker, {
    env: body.env,
    ...(body.suite === undefined ? {} : { suite: body.suite }),
    select: body.select,
    plan: (suite, opts) => planTestRunSet(suite, body, opts),
    once,
    log: { fields: {}, message: 'test run set created' },
  });
}

/**
 * Makes a set again from an earlier one (src/sets/rerun.ts: what it inherits);
 * `only: 'failed'` keeps the tests whose members ended FAIL.
 */
export async function rerunSet(maker: SetMaker, earlier: TestRunSetRecord, only?: 'failed'): Promise<string> {
  const { sets } = maker.store;
  const asked = await maker.store.setViews.asked(earlier.id);
  // It was just read: only a retention sweep in between removes it, and then it is gone as any other set is.
  if (!asked) throw new RunsetError('not_found', `no Test Run Set with id ${earlier.id} (it may have passed its retention)`);
  const { suiteVersion: version, selection: select } = asked;
  const again: EarlierSet = {
    id: earlier.id,
    env: earlier.env,
    overrides: asked.overrides,
    labels: asked.labels,
    select,
    timeoutSeconds: asked.timeoutSeconds,
    concurrencyGroup: asked.concurrencyGroup,
  };
  const failed = only === 'failed' ? failedNames(earlier, await sets.listRuns(earlier.id)) : undefined;
  return makeSet(maker, {
    env: earlier.env,
    // A set that ran an uploaded version runs the same version again (still only where the environment allows uploads).
    ...(version ? { suite: version } : {}),
    select,
    plan: (suite, opts) => (failed ? planRerunOfFailures(suite, again, failed, opts) : planRerun(suite, again, opts)),
    log: { fields: { rerunOf: earlier.id }, message: failed ? 'test run set created (rerun of failures)' : 'test run set created (run again)' },
  });
}

async function makeSet(maker: SetMaker, making: Making): Promise<string> {
  const { store } = maker;
  // A selection's patterns may hold the event loop up to MATCH_DEADLINE_MS:
  // a request carrying them spends the budget before they run, refused or
  // not, so a key cannot stall the server with patterns faster than its
  // sets-per-minute. Any other request spends it once judged (a refused one
  // creates no set, so spends nothing).
  const patterned = hasPatterns(making.select);
  if (patterned) maker.spend();
  const [source, history, quarantined] = await Promise.all([
    setSource(maker.suite, { env: making.env, ...(making.suite === undefined ? {} : { suite: making.suite }) }, store.suiteVersions),
    store.durations.history(making.env),
    store.quarantine.activeNames(making.env),
  ]);
  const set = { ...making.plan(source.suite, { secretKey: maker.secretKey, keyId: maker.keyId, history, quarantined }), suiteVersion: source.version };
  if (!patterned) maker.spend();
  if (making.once) {
    // Two first tries racing: the store lets exactly one create.
    const once = await store.sets.createOnce(set, making.once);
    if (!once.created) return replay(once, making.once);
  } else {
    await store.sets.create(set);
  }
  await store.claims.notifyRunsWaiting();
  maker.log.info({ set: set.id, ...making.log.fields, env: set.env, members: set.runs.length }, making.log.message);
  if (set.concurrencyGroup) {
    // The set exists: a failure here is logged, not answered (the older sets then run on, as without a group).
    await supersedeOlder(store, set.id).then(
      (superseded) => superseded.length > 0 && maker.log.info({ set: set.id, superseded }, 'older sets of its concurrency group were cancelled'),
      (err: unknown) => maker.log.warn({ err, set: set.id }, 'cancelling the older sets of its concurrency group failed; they run on'),
    );
  }
  return set.id;
}

/** SHA-256 of the body with object keys sorted, so key order does not make two bodies differ. */
function hashBody(body: unknown): string {
  const canonical = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, x]) => [k, canonical(x)]))
      : v;
  return createHash('sha256').update(JSON.stringify(canonical(body))).digest('hex');
}

/** The answer to a repeated Idempotency-Key: the earlier set, or 422 when the body differs. */
function replay(earlier: { setId: string; bodyHash: string }, claim: IdempotencyClaim): string {
  if (earlier.bodyHash !== claim.bodyHash) {
    throw new RunsetError('idempotency_conflict', `Idempotency-Key "${echo(claim.key)}" was used in the last 24h with a different body; use a new key for a new request`);
  }
  return earlier.setId;
}
