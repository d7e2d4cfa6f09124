/**
 * What runset sends GitHub for a set, checked against GitHub's published REST
 * description by the local GitHub (test/helpers/github-contract.ts): a set
 * with 53 failed Playwright cases gets 50 annotations (GitHub's per-request
 * limit), each at its case's file and line with its error's first line, and
 * the summary says how many were left out.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PlaywrightCase, TestRunRecord } from '../../src/core/types.js';
import type { GitHubConfig } from '../../src/core/code-hosts.js';
import { reportOnGitHub } from '../../src/webhooks/code-hosts/github.js';
import { outboundRequest } from '../../src/webhooks/code-hosts/http.js';
import type { SetSnapshot } from '../../src/webhooks/code-hosts/report.js';
import { GitHubContractServer } from '../helpers/github-contract.js';

const github = new GitHubContractServer();
before(() => github.start().then(() => (github.token = 'ghs_unit')));
after(() => github.stop());

function member(i: number, status: 'SUCCESS' | 'FAIL'): TestRunRecord {
  return {
    id: `m${i}`, setId: 's1', position: i, name: `shop.spec.ts › case ${i}`, type: 'playwright', status, attempts: 1, starts: 1, restarts: [], startedAt: null, endedAt: null, durationMs: 10,
    error: status === 'FAIL' ? `\nError: expected ${i}\n    at shop.spec.ts:${i + 1}` : null, output: null, workerId: null, heldBy: null, skipped: false, quarantined: false, expectedMs: null, cases: [],
  };
}

test('53 failed cases: 50 annotations in one valid create, the rest counted in the summary', async () => {
  const members = [member(0, 'SUCCESS'), ...Array.from({ length: 53 }, (_, i) => member(i + 1, 'FAIL'))];
  const cases = new Map<string, PlaywrightCase>(members.map((m) => [m.id, { entry: 'ui', project: '', browser: 'chromium', file: 'shop.spec.ts', line: m.position + 1, titles: [m.name] }]));
  const snapshot: SetSnapshot = {
    set: { id: 's1', env: 'staging', status: 'FAIL', counts: { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 53 }, failing: 53, createdAt: '2026-01-01T00:00:00.000Z', startedAt: '2026-01-01T00:00:01.000Z', endedAt: '2026-01-01T00:01:00.000Z' },
    members, cases, commit: 'abc123', cancelled: null, dashboardUrl: 'https://runset.example.com/sets/s1',
  };
  const config: GitHubConfig = { owner: 'acme', repo: 'shop', auth: { kind: 'token', token: { kind: 'env', name: 'X' } }, environments: null, apiUrl: github.url, checkName: 'runset ({env})', pathPrefix: 'e2e/' };
  const sent = await reportOnGitHub(config, snapshot, { request: outboundRequest(), bearer: 'ghs_unit', signal: AbortSignal.timeout(10_000) });
  assert.equal(sent.statusCode, 201);
  assert.deepEqual(github.violations, []);
  const [run] = github.checkRuns;
  assert.equal(run?.conclusion, 'failure');
  assert.equal(run.output.annotations.length, 50);
  assert.deepEqual(run.output.annotations[2], { path: 'e2e/shop.spec.ts', start_line: 4, end_line: 4, annotation_level: 'failure', title: 'shop.spec.ts › case 3', message: 'Error: expected 3' });
  assert.match(run.output.summary!, /3 more failed Playwright cases are not annotated/);
  assert.match(run.output.title!, /^53 failed, 1 passed of 54 tests$/);

  // Once completed, a later attempt leaves the check run alone (GitHub would append the annotations again).
  const again = await reportOnGitHub(config, snapshot, { request: outboundRequest(), bearer: 'ghs_unit', signal: AbortSignal.timeout(10_000) });
  assert.deepEqual(again, { statusCode: 200, body: '' });
  assert.equal(github.checkRuns[0]!.output.annotations.length, 50);
});
