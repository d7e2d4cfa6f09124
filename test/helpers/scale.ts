/**
 * API-level helpers for scale tests: create sets, read statuses and members
 * (tolerating an API that is briefly unavailable, e.g. while PostgreSQL
 * restarts), wait for many sets, and a watcher that samples statuses during a
 * run and records every broken invariant of docs/interface.md.
 */
import { deriveSetStatus, type Counts, type RunState } from '../../src/core/states.js';
import { api } from './server.js';

export interface Server {
  url: string;
  apiKey: string;
}

export interface SetStatus {
  id: string;
  status: RunState;
  startedAt: string | null;
  endedAt: string | null;
  createdAt: string;
  progress: { counts: Counts };
}

export interface Member {
  id: string;
  name: string;
  status: RunState;
  attempts: number;
  /** How many times it was started: more than 1 when a start was lost and it ran again. */
  starts: number;
  /** Why each start after the first happened: 'lease lost' or 'worker lost'. */
  restarts: string[];
  startedAt: string | null;
  endedAt: string | null;
  error: string | null;
  output: string | null;
  /** The worker that started its last attempt. */
  workerId: string | null;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Retries network errors and 5xx until `withinMs` (the store may be restarting). */
async function retrying<T>(what: string, fn: () => Promise<{ status: number; body: T; text: string }>, withinMs: number): Promise<T> {
  const until = Date.now() + withinMs;
  for (;;) {
    let failure: string;
    try {
      const res = await fn();
      if (res.status === 200) return res.body;
      failure = `${res.status} ${res.text}`;
      if (res.status < 500) throw new Error(`${what}: ${failure}`);
    } catch (err) {
      if ((err as Error).message.startsWith(`${what}:`)) throw err;
      failure = (err as Error).message;
    }
    if (Date.now() > until) throw new Error(`${what}: still failing after ${withinMs}ms: ${failure}`);
    await sleep(100);
  }
}

export async function createSet(server: Server, env: string, envOverride?: Record<string, string>, withinMs = 10_000): Promise<string> {
  const body = envOverride ? { env, envOverride } : { env };
  const created = await retrying('create', () => api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body }), withinMs);
  return created.testRunSetId;
}

export function getStatus(server: Server, id: string, withinMs = 10_000): Promise<SetStatus> {
  return retrying(`status of ${id}`, () => api<SetStatus>(server, 'GET', `/v0/test-run-sets/${id}`), withinMs);
}

export async function listMembers(server: Server, id: string, withinMs = 10_000): Promise<Member[]> {
  const list = await retrying(`members of ${id}`, () => api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`), withinMs);
  return list.testRuns;
}

export const isEnded = (s: SetStatus): boolean => s.status === 'SUCCESS' || s.status === 'FAIL';

/**
 * Waits until every set has ended; throws naming the sets still open after `withinMs`.
 * One set at a time, each read held by the server until that set's status or a count
 * changes (`If-None-Match` with `Prefer: wait`, as the CI client waits): reading every
 * open set every 100 ms cost the API about 3 ms of CPU a read, 50 sets 1.5 s a second.
 */
export async function waitForSets(server: Server, ids: readonly string[], withinMs: number): Promise<Map<string, SetStatus>> {
  const until = Date.now() + withinMs;
  const ended = new Map<string, SetStatus>();
  for (const id of ids) {
    let last = await heldRead(server, id, undefined, Math.max(1000, until - Date.now()));
    while (!isEnded(last.status)) {
      if (Date.now() > until) {
        const open = ids.filter((other) => !ended.has(other) && other !== id);
        const left = [last.status, ...(await Promise.all(open.map((other) => getStatus(server, other))))].filter((s) => !isEnded(s));
        throw new Error(`${left.length} set(s) still open after ${withinMs}ms:\n${left.slice(0, 10).map((s) => `${s.id} ${s.status} ${JSON.stringify(s.progress.counts)}`).join('\n')}`);
      }
      const asked = Date.now();
      const next = await heldRead(server, id, last, Math.max(1000, until - Date.now()));
      // A server that did not hold the read (no tag, or it does not wait): poll every 100 ms as before.
      if (!next.held && Date.now() - asked < 20) await sleep(100);
      last = next;
    }
    ended.set(id, last.status);
  }
  return ended;
}

interface HeldRead {
  status: SetStatus;
  etag: string | null;
  held: boolean;
}

/** A set's status, held by the server for up to 5 s while it is still `last` (answered 304 then); retried as getStatus is. */
function heldRead(server: Server, id: string, last: HeldRead | undefined, withinMs: number): Promise<HeldRead> {
  const seconds = Math.max(1, Math.min(5, Math.floor(withinMs / 1000)));
  const headers: Record<string, string> = last?.etag ? { 'if-none-match': last.etag, prefer: `wait=${seconds}` } : {};
  return retrying(`status of ${id}`, async () => {
    const res = await api<SetStatus>(server, 'GET', `/v0/test-run-sets/${id}`, { headers });
    const held = res.headers.get('preference-applied') !== null;
    if (res.status === 304 && last) return { status: 200, body: { ...last, held }, text: '' };
    return { status: res.status, body: { status: res.body, etag: res.headers.get('etag'), held }, text: res.text };
  }, withinMs);
}

/** Resolves once `check` answers true (polled every `everyMs`); throws `what` after `withinMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, withinMs = 15_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${withinMs}ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

const RANK: Readonly<Record<RunState, number>> = { WAITING: 0, RUNNING: 1, SUCCESS: 2, FAIL: 2 };

/** Every invariant a status answer must keep by itself, as messages (empty = fine). */
export function statusProblems(s: SetStatus, members: number): string[] {
  const c = s.progress.counts;
  const problems: string[] = [];
  const sum = c.WAITING + c.RUNNING + c.SUCCESS + c.FAIL;
  if (sum !== members) problems.push(`counts sum to ${sum}, not ${members}: ${JSON.stringify(c)}`);
  // No quarantine in these runs: every FAIL fails the set.
  if (deriveSetStatus(c, s.startedAt !== null, c.FAIL) !== s.status) problems.push(`status ${s.status} does not follow from ${JSON.stringify(c)}`);
  if ((s.status === 'WAITING') !== (s.startedAt === null)) problems.push(`status ${s.status} with startedAt ${s.startedAt}`);
  if ((s.status === 'SUCCESS' || s.status === 'FAIL') !== (s.endedAt !== null)) problems.push(`status ${s.status} with endedAt ${s.endedAt}`);
  return problems.map((p) => `set ${s.id}: ${p}`);
}

/**
 * Samples the statuses of some sets while a run goes on and records broken
 * invariants: counts always sum to the members, the status follows from them,
 * a set never moves backwards and keeps its first startedAt (and its end).
 * Unreachable API answers are skipped (not invariants of the store).
 */
export class SetWatcher {
  readonly violations: string[] = [];
  samples = 0;
  private readonly last = new Map<string, SetStatus>();
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly server: Server,
    private readonly ids: readonly string[],
    private readonly members: number,
  ) {}

  start(everyMs = 250): void {
    this.running = (async () => {
      while (!this.stopped) {
        await this.sample();
        await sleep(everyMs);
      }
    })();
  }

  /** Ends the sampling with one last sample; safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return this.running;
    this.stopped = true;
    const last = this.running;
    this.running = (async () => {
      await last;
      await this.sample();
    })();
    return this.running;
  }

  private async sample(): Promise<void> {
    const open = this.ids.filter((id) => !(this.last.get(id) && isEnded(this.last.get(id)!)));
    const answers = await Promise.all(
      open.map((id) => api<SetStatus>(this.server, 'GET', `/v0/test-run-sets/${id}`).catch(() => undefined)),
    );
    for (const res of answers) {
      if (res?.status !== 200) continue;
      this.samples++;
      this.observe(res.body);
    }
  }

  private observe(s: SetStatus): void {
    this.violations.push(...statusProblems(s, this.members));
    const prev = this.last.get(s.id);
    if (prev) {
      if (RANK[s.status] < RANK[prev.status]) this.violations.push(`set ${s.id} moved back from ${prev.status} to ${s.status}`);
      if (isEnded(prev) && s.status !== prev.status) this.violations.push(`set ${s.id} changed after ending: ${prev.status} → ${s.status}`);
      if (prev.startedAt !== null && s.startedAt !== prev.startedAt) this.violations.push(`set ${s.id} startedAt changed ${prev.startedAt} → ${s.startedAt}`);
      if (prev.endedAt !== null && s.endedAt !== prev.endedAt) this.violations.push(`set ${s.id} endedAt changed ${prev.endedAt} → ${s.endedAt}`);
    }
    this.last.set(s.id, s);
  }
}

/** Tallies member statuses as the members endpoint reports them. */
export function tally(members: ReadonlyArray<{ status: RunState }>): Counts {
  const counts: Counts = { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 0 };
  for (const m of members) counts[m.status]++;
  return counts;
}
