/**
 * The one run path (src/scheduler/run.ts) against a fake link and fake
 * executors: a share of a batch (starts at begin, outcomes as cases end,
 * artifacts stored, interrupted cases given back, forgotten ones failed, lost
 * leases ignored and the run stopped when nothing running is ours) and a single
 * member (its outcome handed over, retried attempts, nothing written when aborted).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { ArtifactSaver } from '../../src/artifacts/save.js';
import type { BatchExecutionContext, CaseResult, ClaimedRun, ExecutionResult, Executor, RunOutcome, TestSpec } from '../../src/core/types.js';
import type { InFlight } from '../../src/scheduler/inflight.js';
import { LeaseKeeper } from '../../src/scheduler/lease-keeper.js';
import { OutcomeWriter } from '../../src/scheduler/outcome-writer.js';
import { runMembers, type RunDeps } from '../../src/scheduler/run.js';
import { commandSpec, FakeLink, playwrightCase } from '../helpers/fake-link.js';

const LEASE_MS = 150;
const logger = pino({ level: 'silent' });
const passed = (extra: Partial<CaseResult> = {}): CaseResult => ({ passed: true, error: null, output: 'ok', attempts: 1, durationMs: 3, artifacts: [], ...extra });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A batch executor that plays `script` against the context (begin and end its cases as it likes). */
function batchExecutor(script: (ctx: BatchExecutionContext, specs: TestSpec[]) => Promise<void> | void): Executor {
  return { type: 'playwright', run: () => Promise.reject(new Error('batched members run together')), runBatch: async (specs, ctx) => script(ctx, specs) };
}

function fixture(executors: Executor[], extra: Partial<RunDeps> = {}) {
  const link = new FakeLink();
  const inflight = new Map<string, InFlight>();
  const started: string[] = [];
  const deps: RunDeps = {
    link,
    keeper: new LeaseKeeper(link, LEASE_MS, logger),
    executors: new Map(executors.map((e) => [e.type, e])),
    resolveVariables: () => ({ values: { TOKEN: 's3cret' }, secrets: ['s3cret'] }),
    logger,
    workRoot: path.join(tmpdir(), 'runset-run-test'),
    inflight,
    metrics: { memberStarted: (run) => void started.push(run.id), memberEnded: () => undefined },
    ...extra,
  };
  const writer = new OutcomeWriter(link, logger, LEASE_MS);
  const run = async (claimed: ClaimedRun[], abort = new AbortController()) =>
    runMembers({ runs: claimed, parallelism: 2, abort, finish: (r, o) => writer.finish(r, o) }, deps);
  return { link, deps, inflight, started, run };
}

async function claimBatch(link: FakeLink, n: number): Promise<ClaimedRun[]> {
  link.add('s', Array.from({ length: n }, (_, i) => playwrightCase(`case ${i}`)), 'e2e');
  return link.claimRuns({ workerId: 'w', limit: n, leaseMs: LEASE_MS });
}

test('a share: each case starts at its begin and its outcome is written at its end, secrets masked', async () => {
  const { link, run, inflight, started, deps } = fixture([
    batchExecutor((ctx) => {
      ctx.onBegin(0, 1);
      ctx.onEnd(0, passed());
      ctx.onBegin(1, 1);
      ctx.onEnd(1, { ...passed(), passed: false, error: 'bad s3cret', output: 'token s3cret' });
    }),
  ]);
  const claimed = await claimBatch(link, 2);
  await run(claimed);
  const [a, b] = claimed.map((c) => link.members.get(c.id)!);
  assert.equal(a!.status, 'SUCCESS');
  assert.equal(b!.status, 'FAIL');
  assert.doesNotMatch(`${b!.outcome!.error} ${b!.outcome!.output}`, /s3cret/);
  assert.equal(link.called('startRun').length, 2, 'started at begin');
  assert.deepEqual(started, claimed.map((c) => c.id), 'counted as started at begin');
  assert.equal(inflight.size, 0, 'forgotten once written');
  assert.equal(deps.keeper.size, 0, 'no lease kept');
});

test('a share: a case\'s files are stored and recorded with its outcome', async () => {
  const saver: ArtifactSaver = {
    save: (files) => Promise.resolve({ artifacts: files.map((f) => ({ id: f.name, name: f.name, contentType: f.contentType, size: 1, location: `file:${f.name}` })), notes: [] }),
    discard: () => Promise.resolve(),
  };
  let workDir = '';
  const { link, run } = fixture(
    [batchExecutor((ctx) => {
      workDir = ctx.workDir;
      ctx.onEnd(0, passed({ artifacts: [{ name: 'shot.png', contentType: 'image/png', path: path.join(ctx.workDir, 'shot.png') }] }));
    })],
    { artifacts: saver },
  );
  const [claimed] = await claimBatch(link, 1);
  await run([claimed!]);
  assert.deepEqual(link.members.get(claimed!.id)!.outcome!.artifacts?.map((a) => a.name), ['shot.png']);
  assert.ok(workDir.startsWith(path.join(tmpdir(), 'runset-run-test', 'batch-')), 'a scratch folder of its own');
  assert.equal(link.called('startRun').length, 1, 'a case that ended without a begin is started first');
});

test('a share: an interrupted case goes back to WAITING; one the executor never settled fails', async () => {
  const { link, run } = fixture([batchExecutor((ctx) => void ctx.onEnd(0, { ...passed(), interrupted: true }))]);
  const [interrupted, forgotten] = await claimBatch(link, 2);
  await run([interrupted!, forgotten!]);
  assert.equal(link.members.get(interrupted!.id)!.status, 'WAITING');
  assert.equal(link.members.get(interrupted!.id)!.workerId, null, 'released');
  assert.equal(link.members.get(forgotten!.id)!.status, 'FAIL');
  assert.match(link.members.get(forgotten!.id)!.outcome!.error!, /ended without a result/);
});

test('a share: an executor that throws fails every case it had not ended', async () => {
  const { link, run } = fixture([
    batchExecutor((ctx) => {
      ctx.onEnd(0, passed());
      throw new Error('playwright blew up');
    }),
  ]);
  const [a, b] = await claimBatch(link, 2);
  await run([a!, b!]);
  assert.equal(link.members.get(a!.id)!.status, 'SUCCESS');
  assert.match(link.members.get(b!.id)!.outcome!.error!, /executor crashed: playwright blew up/);
});

test('a share: a lost lease is ignored, and the run stops once nothing running is ours', async () => {
  let aborted: unknown;
  const { link, run, inflight } = fixture([
    batchExecutor(async (ctx) => {
      ctx.onBegin(0, 1);
      ctx.onBegin(1, 1);
      ctx.onEnd(1, passed());
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      aborted = ctx.signal.reason;
      ctx.onEnd(0, passed());
    }),
  ]);
  const [lost, kept] = await claimBatch(link, 2);
  const running = run([lost!, kept!]);
  await sleep(10);
  link.steal(lost!.id);
  await running;
  assert.equal(aborted, 'lease lost');
  assert.equal(link.members.get(lost!.id)!.outcome, undefined, 'nothing written for the lost case');
  assert.equal(link.members.get(kept!.id)!.status, 'SUCCESS');
  assert.equal(inflight.size, 0);
});

test('a share: variables that do not resolve fail every case, saying why', async () => {
  const { link, run } = fixture([batchExecutor(() => assert.fail('must not run'))], {
    resolveVariables: () => {
      throw new Error('secret TOKEN cannot be unsealed');
    },
  });
  const claimed = await claimBatch(link, 2);
  await run(claimed);
  for (const c of claimed) assert.match(link.members.get(c.id)!.outcome!.error!, /cannot be unsealed/);
});

/** A single-member executor answering `results` in turn. */
function commandExecutor(results: ExecutionResult[], calls: string[] = []): Executor {
  return {
    type: 'command',
    run: async (_spec, ctx) => {
      calls.push(ctx.variables.TOKEN ?? '');
      const result = results.shift() ?? { passed: true, error: null, output: '' };
      if (result.error === 'hang') await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
      return result;
    },
  };
}

async function claimSingle(link: FakeLink, spec: TestSpec = commandSpec('t')): Promise<ClaimedRun> {
  link.add('s', [spec]);
  return (await link.claimRuns({ workerId: 'w', limit: 1, leaseMs: LEASE_MS }))[0]!;
}

test('a single member: its outcome goes to finish (retries counted, secrets masked); it was RUNNING from its claim', async () => {
  const calls: string[] = [];
  const { link, deps, started } = fixture([commandExecutor([{ passed: false, error: 'no s3cret', output: 'a' }, { passed: true, error: null, output: 'b' }], calls)]);
  const claimed = await claimSingle(link, { ...commandSpec('t'), retries: 2 });
  const outcomes: RunOutcome[] = [];
  await runMembers({ runs: [claimed], parallelism: 1, abort: new AbortController(), finish: (_, o) => (outcomes.push(o), Promise.resolve(true)) }, deps);
  assert.deepEqual(calls, ['s3cret', 's3cret'], 'run with its variables, twice');
  assert.equal(outcomes.length, 1);
  assert.equal(outcomes[0]!.status, 'SUCCESS');
  assert.equal(outcomes[0]!.attempts, 2);
  assert.match(outcomes[0]!.output, /── attempt 1 ──\na\n── attempt 2 ──\nb/);
  assert.equal(link.called('startRun').length, 0, 'no start write: the claim started it');
  assert.deepEqual(started, [claimed.id]);
});

test('a single member: every attempt\'s files are stored, each path once, each name unique, from a scratch folder made for it and removed after', async () => {
  const scratches: string[] = [];
  const saver: ArtifactSaver = {
    save: (files, _secrets, workDir) => {
      scratches.push(workDir);
      return Promise.resolve({ artifacts: files.map((f) => ({ id: f.path, name: f.name, contentType: f.contentType, size: 1, location: `file:${f.path}` })), notes: [] });
    },
    discard: () => Promise.resolve(),
  };
  const file = (at: string) => ({ name: 'log.txt', contentType: 'text/plain', path: at });
  const { link, deps } = fixture(
    [commandExecutor([{ passed: false, error: 'first', output: '', artifacts: [file('/suite/a/log.txt'), file('/suite/both.txt')] }, { passed: true, error: null, output: '', artifacts: [file('/suite/b/log.txt'), file('/suite/both.txt')] }])],
    { artifacts: saver },
  );
  const claimed = await claimSingle(link, { ...commandSpec('t'), retries: 1 });
  const outcomes: RunOutcome[] = [];
  await runMembers({ runs: [claimed], parallelism: 1, abort: new AbortController(), finish: (_, o) => (outcomes.push(o), Promise.resolve(true)) }, deps);
  assert.deepEqual(outcomes[0]!.artifacts?.map((a) => [a.name, a.location]), [
    ['log.txt', 'file:/suite/a/log.txt'],
    ['log-2.txt', 'file:/suite/both.txt'],
    ['log-3.txt', 'file:/suite/b/log.txt'],
  ]);
  assert.equal(scratches.length, 1);
  assert.ok(scratches[0]!.startsWith(path.join(tmpdir(), 'runset-run-test', 'single-')), 'a scratch folder of its own');
  assert.equal(existsSync(scratches[0]!), false, 'removed once the files are stored');
});

test('a single member: the lease is kept until finish says the outcome is written', async () => {
  const { link, deps } = fixture([commandExecutor([])]);
  const claimed = await claimSingle(link);
  let written!: (ok: boolean) => void;
  const running = runMembers({ runs: [claimed], parallelism: 1, abort: new AbortController(), finish: () => new Promise((resolve) => (written = resolve)) }, deps);
  await sleep(120);
  assert.equal(deps.keeper.size, 1);
  assert.ok(link.members.get(claimed.id)!.beats.length >= 1, 'heartbeated while its outcome waits to be written');
  written(true);
  await running;
  assert.equal(deps.keeper.size, 0);
});

test('a single member whose lease is lost is stopped and nothing is written', async () => {
  const { link, deps, inflight } = fixture([commandExecutor([{ passed: true, error: 'hang', output: '' }])]);
  const claimed = await claimSingle(link);
  const abort = new AbortController();
  const finished: RunOutcome[] = [];
  const running = runMembers({ runs: [claimed], parallelism: 1, abort, finish: (_, o) => (finished.push(o), Promise.resolve(true)) }, deps);
  link.steal(claimed.id);
  await running;
  assert.equal(abort.signal.reason, 'lease lost');
  assert.deepEqual(finished, []);
  assert.equal(inflight.size, 0);
});

test('a single member aborted (shutdown) writes nothing and stays in flight for the pool to release', async () => {
  const { link, deps, inflight } = fixture([commandExecutor([{ passed: true, error: 'hang', output: '' }])]);
  const claimed = await claimSingle(link);
  const abort = new AbortController();
  const finished: RunOutcome[] = [];
  const running = runMembers({ runs: [claimed], parallelism: 1, abort, finish: (_, o) => (finished.push(o), Promise.resolve(true)) }, deps);
  assert.equal(inflight.get(claimed.id)?.abort, abort, 'known to the pool while it runs');
  abort.abort('shutdown');
  await running;
  assert.deepEqual(finished, []);
  assert.equal(link.called('releaseRuns').length, 0, 'the pool releases on shutdown, not the run');
});

test('a single member with no executor for its type fails, naming what this worker runs', async () => {
  const { link, deps } = fixture([commandExecutor([])]);
  const claimed = await claimSingle(link, { ...commandSpec('t'), type: 'http' } as unknown as TestSpec);
  const outcomes: RunOutcome[] = [];
  await runMembers({ runs: [claimed], parallelism: 1, abort: new AbortController(), finish: (_, o) => (outcomes.push(o), Promise.resolve(true)) }, deps);
  assert.match(outcomes[0]!.error!, /no executor for tests of type "http" in this worker; it runs command/);
});

test('a single member: an attempt past its timeout is stopped with a TimeoutError and fails saying so; the run\'s abort reaches it with the run\'s reason', async () => {
  const reasons: unknown[] = [];
  const waiting: Executor = {
    type: 'command',
    run: async (_spec, ctx) => {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      reasons.push(ctx.signal.reason);
      return { passed: false, error: 'stopped', output: '' };
    },
  };
  const { link, deps } = fixture([waiting]);
  const timedOut = await claimSingle(link, { ...commandSpec('slow'), timeoutSeconds: 0.05, retries: 1 });
  const outcomes: RunOutcome[] = [];
  const finish = (_: ClaimedRun, o: RunOutcome) => (outcomes.push(o), Promise.resolve(true));
  await runMembers({ runs: [timedOut], parallelism: 1, abort: new AbortController(), finish }, deps);
  assert.equal(outcomes[0]!.error, 'timed out after 0.05s (timeoutSeconds)');
  assert.equal(outcomes[0]!.attempts, 2, 'each attempt has a timeout of its own');
  assert.deepEqual(reasons.map((r) => (r as DOMException).name), ['TimeoutError', 'TimeoutError']);

  const stopped = await claimSingle(link, { ...commandSpec('stopped'), timeoutSeconds: 60 });
  const abort = new AbortController();
  const running = runMembers({ runs: [stopped], parallelism: 1, abort, finish }, deps);
  await sleep(20);
  abort.abort('shutdown');
  await running;
  assert.equal(reasons[2], 'shutdown');
  assert.equal(outcomes.length, 1, 'an aborted run writes nothing');
});
