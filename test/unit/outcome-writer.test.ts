/**
 * Writing outcomes (src/scheduler/outcome-writer.ts) against a fake link:
 * retried while the service is out of reach and only then; a lease not ours
 * is said and not counted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { ClaimedRun, RunOutcome } from '../../src/core/types.js';
import { OutcomeWriter } from '../../src/scheduler/outcome-writer.js';
import { commandSpec, FakeLink, unavailable } from '../helpers/fake-link.js';

const passed: RunOutcome = { status: 'SUCCESS', attempts: 1, error: null, output: '', durationMs: 5 };

async function claimedOne(link: FakeLink): Promise<ClaimedRun> {
  link.add('s', [commandSpec('t')]);
  return (await link.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 }))[0]!;
}

function writer(link: FakeLink, ended: string[] = [], leaseMs = 10_000): OutcomeWriter {
  return new OutcomeWriter(link, pino({ level: 'silent' }), leaseMs, { memberStarted: () => undefined, memberEnded: (run) => void ended.push(run.id) });
}

test('a write is retried while the service is unavailable, then lands and is counted', async () => {
  const link = new FakeLink();
  const run = await claimedOne(link);
  link.failures.finishRun = [unavailable(), unavailable()];
  const ended: string[] = [];
  assert.equal(await writer(link, ended).finish(run, passed), true);
  assert.equal(link.called('finishRun').length, 3);
  assert.equal(link.members.get(run.id)!.status, 'SUCCESS');
  assert.deepEqual(ended, [run.id]);
});

test('a write that fails for another reason is not retried', async () => {
  const link = new FakeLink();
  const run = await claimedOne(link);
  link.failures.finishRun = [new Error('illegal member move')];
  assert.equal(await writer(link).finish(run, passed), false);
  assert.equal(link.called('finishRun').length, 1);
  assert.equal(link.members.get(run.id)!.status, 'RUNNING');
});

test('retries stop once the lease may have expired', async () => {
  const link = new FakeLink();
  const run = await claimedOne(link);
  link.failures.finishRun = Array.from({ length: 50 }, unavailable);
  const started = Date.now();
  assert.equal(await writer(link, [], 100).finish(run, passed), false);
  assert.ok(Date.now() - started < 2000);
  assert.ok(link.called('finishRun').length < 50);
});

test('a retry is told it is one (a finishAndClaim retry claims nothing)', async () => {
  const link = new FakeLink();
  const run = await claimedOne(link);
  const retries: boolean[] = [];
  let first = true;
  const written = await writer(link).write(run, passed, (retry) => {
    retries.push(retry);
    if (first) {
      first = false;
      return Promise.reject(unavailable());
    }
    return Promise.resolve({ finished: true });
  });
  assert.deepEqual(written, { finished: true });
  assert.deepEqual(retries, [false, true]);
});

test('a lease taken over: not written, not counted', async () => {
  const link = new FakeLink();
  const run = await claimedOne(link);
  link.steal(run.id);
  const ended: string[] = [];
  assert.equal(await writer(link, ended).finish(run, passed), false);
  assert.deepEqual(ended, []);
});
