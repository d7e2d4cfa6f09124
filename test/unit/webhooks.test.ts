/**
 * The pure parts of webhooks: the signature (and its check), the retry
 * schedule, what a delivery says (JSON and Slack), and `webhooks:` in
 * runset.config.yaml with its errors (a secret is never echoed).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { ConfigError, parseSuiteConfig } from '../../src/config/suite.js';
import type { TestRunRecord, TestRunSetRecord } from '../../src/core/types.js';
import { webhookWants, type SetEvent, type WebhookConfig, type WebhookWhen } from '../../src/core/webhooks.js';
import { failedTests, MAX_FAILED_LISTED, renderBody } from '../../src/webhooks/payload.js';
import { DEFAULT_RETRY, nextRetryMs } from '../../src/webhooks/retry.js';
import { signatureHeader, verifySignature } from '../../src/webhooks/signature.js';

describe('webhook signature', () => {
  const body = '{"event":"set.finished"}';
  test('t=<seconds>,v1=<hex HMAC-SHA256 of "t.body">, as Stripe signs', () => {
    const header = signatureHeader('s3cret', body, 1_700_000_000);
    const expected = createHmac('sha256', 's3cret').update(`1700000000.${body}`).digest('hex');
    assert.equal(header, `t=1700000000,v1=${expected}`);
  });
  test('verifies the right secret, body and a recent time only', () => {
    const header = signatureHeader('s3cret', body, 1_700_000_000);
    const at = { nowSeconds: 1_700_000_100 };
    assert.ok(verifySignature(header, body, 's3cret', at));
    assert.ok(!verifySignature(header, body, 'other', at), 'another secret');
    assert.ok(!verifySignature(header, `${body} `, 's3cret', at), 'a changed body');
    assert.ok(!verifySignature(header, body, 's3cret', { nowSeconds: 1_700_000_301 }), 'older than the tolerance (a replay)');
    assert.ok(!verifySignature(header.replace(/v1=../, 'v1=zz'), body, 's3cret', at), 'a broken mac');
    assert.ok(!verifySignature('t=x,v1=00', body, 's3cret', at));
    assert.ok(!verifySignature(undefined, body, 's3cret', at));
  });
});

describe('webhook retry schedule', () => {
  const policy = { firstDelayMs: 10_000, maxDelayMs: 3_600_000, windowMs: 86_400_000 };
  const middle = () => 0.5; // no jitter
  test('doubles from the first delay up to the most, with ±20 % jitter', () => {
    assert.deepEqual([1, 2, 3, 4].map((n) => nextRetryMs(policy, n, 0, middle)), [10_000, 20_000, 40_000, 80_000]);
    assert.equal(nextRetryMs(policy, 20, 0, middle), 3_600_000);
    assert.equal(nextRetryMs(policy, 1, 0, () => 0), 8_000);
    assert.equal(nextRetryMs(policy, 1, 0, () => 1), 12_000);
  });
  test('tries for 24 hours: the last attempt at the end of the window, then gives up', () => {
    assert.equal(nextRetryMs(policy, 30, 86_400_000 - 1_000, middle), 1_000);
    assert.equal(nextRetryMs(policy, 30, 86_400_000, middle), null);
    assert.equal(DEFAULT_RETRY.windowMs, 24 * 3600 * 1000);
  });
});

interface Slack {
  text: string;
  blocks: Array<{ text: { text: string } }>;
}

describe('webhook payload', () => {
  const set: TestRunSetRecord = {
    id: '0b9c1f8e-5a4e-4f7e-9d59-6d3c2f0a1b2c',
    env: 'prod<uction>',
    status: 'FAIL',
    failing: 1,
    counts: { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 2 },
    createdAt: '2026-11-25T10:00:00.000Z',
    startedAt: '2026-11-25T10:00:01.000Z',
    endedAt: '2026-11-25T10:00:09.000Z',
  };
  const member = (name: string, status: TestRunRecord['status'], error: string | null) => ({ name, status, error }) as TestRunRecord;
  const members = [member('a', 'SUCCESS', null), member('b & c', 'FAIL', '\nexpected 200, got 500\nat line 3'), member('d', 'FAIL', null)];
  const report = { event: 'set.finished' as const, deliveryId: 'd-1', set, members, dashboardUrl: 'https://r.example/sets/x' };

  test('JSON: the seed status document, env, failed tests with the first line of their error, the link', () => {
    assert.deepEqual(JSON.parse(renderBody('json', report)), {
      event: 'set.finished',
      deliveryId: 'd-1',
      env: 'prod<uction>',
      testRunSet: { id: set.id, status: 'FAIL', startedAt: set.startedAt, endedAt: set.endedAt, createdAt: set.createdAt, progress: { counts: set.counts } },
      failedTests: [
        { name: 'b & c', error: 'expected 200, got 500' },
        { name: 'd', error: null },
      ],
      failedTestsNotListed: 0,
      cancelled: null,
      url: 'https://r.example/sets/x',
    });
  });

  test('a set ended early says why: JSON `cancelled`, and the Slack headline', () => {
    const superseded = { ...report, cancelled: 'superseded by 0190-new' };
    assert.equal((JSON.parse(renderBody('json', superseded)) as { cancelled: string }).cancelled, 'superseded by 0190-new');
    const slack = JSON.parse(renderBody('slack', superseded)) as { blocks: Array<{ text: { text: string } }> };
    assert.match(slack.blocks[0]!.text.text, /FAIL \(superseded by 0190-new\) · 2 failed/);
  });
  test('a long list is cut, and says how many are left out', () => {
    const many = Array.from({ length: MAX_FAILED_LISTED + 7 }, (_, i) => member(`t${i}`, 'FAIL', 'x'));
    const body = JSON.parse(renderBody('json', { ...report, members: many })) as { failedTests: unknown[]; failedTestsNotListed: number };
    assert.equal(body.failedTests.length, MAX_FAILED_LISTED);
    assert.equal(body.failedTestsNotListed, 7);
    assert.equal(failedTests([member('long', 'FAIL', 'y'.repeat(1000))])[0]?.error?.length, 300);
  });
  test('Slack: a text and blocks, with the link and the failed tests, escaped', () => {
    const slack = JSON.parse(renderBody('slack', report)) as Slack;
    assert.equal(slack.text, 'runset prod<uction>: FAIL');
    const text = slack.blocks.map((b) => b.text.text).join('\n');
    assert.match(text, /\*prod&lt;uction&gt;\*: FAIL · 2 failed, 1 passed · <https:\/\/r\.example\/sets\/x\|open the set>/);
    assert.match(text, /• \*b &amp; c\* — expected 200, got 500/);
    const started = JSON.parse(renderBody('slack', { ...report, event: 'set.started', set: { ...set, status: 'RUNNING' } })) as Slack;
    assert.equal(started.text, 'runset prod<uction>: started');
  });
});

describe('webhooks in runset.config.yaml', () => {
  const FILE = '/srv/runset.config.yaml';
  const base = `environments:\n  staging:\n  production:\ntests: []\nwebhooks:\n`;
  const load = (hooks: string) => parseSuiteConfig(base + hooks, FILE);
  const failure = (hooks: string): ConfigError => {
    try {
      load(hooks);
    } catch (err) {
      assert.ok(err instanceof ConfigError, String(err));
      return err;
    }
    assert.fail('expected a ConfigError');
  };

  test('defaults: named by position, set.finished, every environment, JSON', () => {
    const { webhooks } = load('  - url: https://hooks.example.com/a\n    secret: ${env:HOOK_SECRET}\n');
    assert.deepEqual(webhooks, [
      { name: 'webhook-1', url: { kind: 'plain', value: 'https://hooks.example.com/a' }, secret: { kind: 'env', name: 'HOOK_SECRET' }, events: ['set.finished'], environments: null, format: 'json', when: 'always' },
    ]);
    assert.deepEqual(parseSuiteConfig('environments:\n  staging:\ntests: []\n', FILE).webhooks, []);
  });
  test('everything given; a Slack webhook may have no secret and read its URL from the environment', () => {
    const { webhooks } = load(
      '  - name: alerts\n    url: ${env:SLACK_URL}\n    format: slack\n    events: [set.started, set.finished]\n    environments: [production]\n',
    );
    assert.deepEqual(webhooks[0], { name: 'alerts', url: { kind: 'env', name: 'SLACK_URL' }, secret: null, events: ['set.started', 'set.finished'], environments: ['production'], format: 'slack', when: 'always' });
  });
  test('when: failure or change takes set ends only; an unknown value or set.started with it is refused', () => {
    const { webhooks } = load('  - url: ${env:SLACK_URL}\n    format: slack\n    when: failure\n');
    assert.equal(webhooks[0]!.when, 'failure');
    assert.match(failure('  - url: ${env:SLACK_URL}\n    format: slack\n    when: sometimes\n').message, /webhooks\[0\]\.when/);
    const started = failure('  - url: ${env:SLACK_URL}\n    format: slack\n    when: change\n    events: [set.started, set.finished]\n');
    assert.equal(started.path, 'webhooks[0].when');
    assert.match(started.message, /sends only set ends, but events lists set\.started/);
  });
    test('a secret in clear is refused without being echoed', () => {
    const err = failure('  - url: https://hooks.example.com/a\n    secret: hunter2-very-secret\n');
    assert.equal(err.path, 'webhooks[0].secret');
    assert.match(err.expected, /\$\{env:NAME\}/);
    assert.ok(!err.message.includes('hunter2'), err.message);
  });
  test('a receiver at a link-local or cloud metadata address is refused at load; a private one is allowed', () => {
    for (const url of ['http://169.254.169.254/latest', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/x', 'http://2852039166/']) {
      assert.match(failure(`  - url: ${url}\n    secret: \${env:S}\n`).message, /webhooks\[0\]\.url: refused: .*(metadata|link-local)/, url);
    }
    assert.equal(load('  - url: http://10.1.2.3/hook\n    secret: ${env:S}\n').webhooks.length, 1);
  });

  test('clear errors: no secret for JSON, an unknown environment or event, a bad URL, a repeated name', () => {
    assert.match(failure('  - url: https://h.example/a\n').message, /webhooks\[0\]\.secret: missing; expected a reference/);
    assert.match(failure('  - url: https://h.example/a\n    secret: ${env:S}\n    environments: [prod]\n').message, /unknown environment "prod"; expected one of the declared environments: staging, production/);
    assert.match(failure('  - url: https://h.example/a\n    secret: ${env:S}\n    events: [set.done]\n').message, /webhooks\[0\]\.events\[0\]/);
    assert.match(failure('  - url: ftp://h.example/a\n    secret: ${env:S}\n').message, /scheme ftp: is not supported/);
    assert.match(failure('  - url: not a url\n    secret: ${env:S}\n').message, /is not a URL/);
    assert.match(failure('  - url: https://h.example/a\n    secret: ${env:S}\n    format: teams\n').message, /webhooks\[0\]\.format/);
    assert.match(
      failure('  - { name: a, url: "https://h.example/a", secret: "${env:S}" }\n  - { name: a, url: "https://h.example/b", secret: "${env:S}" }\n').message,
      /duplicate webhook name "a"/,
    );
  });
});

describe('which events a webhook takes (webhookWants)', () => {
  const hook = (when: WebhookWhen, more: Partial<Pick<WebhookConfig, 'events' | 'environments'>> = {}) => ({ events: ['set.finished'] as const, environments: null, when, ...more });
  const end = (status: string, previousStatus: string | null, env = 'staging'): SetEvent => ({ id: 1, setId: 's', env, event: 'set.finished', status, previousStatus, commit: null });

  test('always: every end; failure: only FAIL (a passing set is skipped); change: a result unlike the previous, or the first', () => {
    const table: Array<[WebhookWhen, string, string | null, boolean]> = [
      ['always', 'SUCCESS', 'SUCCESS', true],
      ['always', 'FAIL', null, true],
      ['failure', 'SUCCESS', 'FAIL', false],
      ['failure', 'FAIL', 'FAIL', true],
      ['change', 'SUCCESS', 'SUCCESS', false],
      ['change', 'FAIL', 'FAIL', false],
      ['change', 'FAIL', 'SUCCESS', true],
      ['change', 'SUCCESS', 'FAIL', true],
      ['change', 'SUCCESS', null, true],
    ];
    for (const [when, status, previous, wanted] of table) assert.equal(webhookWants(hook(when), end(status, previous)), wanted, `${when} ${status} after ${previous}`);
  });

  test('events and environments still come first; a start reaches only when: always', () => {
    const start: SetEvent = { ...end('RUNNING', null), event: 'set.started' };
    assert.equal(webhookWants(hook('always', { events: ['set.started', 'set.finished'] }), start), true);
    assert.equal(webhookWants(hook('failure', { events: ['set.started', 'set.finished'] }), start), false);
    assert.equal(webhookWants(hook('always'), start), false, 'not among its events');
    assert.equal(webhookWants(hook('failure', { environments: ['production'] }), end('FAIL', null)), false, 'another environment');
  });
});
