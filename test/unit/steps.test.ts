/**
 * A process's start as steps (src/roles/steps.ts): setups in order, teardowns
 * in reverse and once; a failed setup tears down the steps before it (and not
 * itself) and fails the start; a function in the list is called when reached,
 * with what the steps before it set up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, sweep, type Step } from '../../src/roles/steps.js';

function recorded(log: string[], name: string, fails = false): Step {
  return {
    name,
    setup: async () => {
      await Promise.resolve();
      if (fails) throw new Error(`${name} failed`);
      log.push(`up ${name}`);
    },
    teardown: () => void log.push(`down ${name}`),
  };
}

test('setups run in order; the teardown runs every step\'s in reverse, once however often it is called', async () => {
  const log: string[] = [];
  let opened = '';
  const tearDown = await setUp([
    { ...recorded(log, 'store'), setup: () => void (opened = 'the store') },
    () => [recorded(log, `worker on ${opened}`)],
    () => [],
    { name: 'nothing to undo', setup: () => void log.push('up nothing') },
    recorded(log, 'api'),
  ]);
  assert.deepEqual(log, ['up worker on the store', 'up nothing', 'up api']);
  await Promise.all([tearDown(), tearDown()]);
  await tearDown();
  assert.deepEqual(log.slice(3), ['down api', 'down worker on the store', 'down store']);
});

test('a failed setup tears down the steps set up before it, not itself nor those after, and fails the start', async () => {
  const log: string[] = [];
  await assert.rejects(setUp([recorded(log, 'store'), recorded(log, 'listen', true), () => [recorded(log, 'never')]]), /listen failed/);
  assert.deepEqual(log, ['up store', 'down store']);
});

test('a sweep step stops the sweep its start answered', async () => {
  let stopped = 0;
  const tearDown = await setUp([sweep('retention', () => () => Promise.resolve(void stopped++))]);
  await tearDown();
  assert.equal(stopped, 1);
});
