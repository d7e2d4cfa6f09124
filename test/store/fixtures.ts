/** A new set as the store contracts and the store-level tests make them: `members` command members of one environment. */
import { randomUUID } from 'node:crypto';
import type { NewTestRunSet, TestSpec } from '../../src/core/types.js';

function spec(name: string): TestSpec {
  return { name, type: 'command', run: ['true'], cwd: '/', tags: [], timeoutSeconds: 5, retries: 0 };
}

export function newSet(members: number, env = 'staging'): NewTestRunSet {
  return {
    id: randomUUID(),
    env,
    variables: { BASE_URL: { kind: 'plain', value: 'http://x' } },
    overrides: {},
    keyId: null,
    createdAt: new Date().toISOString(),
    maxFailures: null,
    labels: {},
    runs: Array.from({ length: members }, (_, i) => ({ id: randomUUID(), position: i, spec: spec(`t${i}`), expectedMs: 1000, quarantined: false, failOnFlaky: false })),
  };
}
