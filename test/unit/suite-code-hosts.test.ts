/**
 * `github:` and `gitlab:` in runset.config.yaml: defaults, and clear errors
 * for what is wrong (no repository, a secret in clear, both or neither
 * credential, an unknown environment, a metadata address); and which sets a
 * code host is told of (a commit label, a listed environment).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseSuiteConfig } from '../../src/config/suite.js';
import { codeHostTargets } from '../../src/core/code-hosts.js';
import type { SetEvent } from '../../src/core/webhooks.js';

const FILE = '/srv/runset.config.yaml';
const base = 'environments:\n  staging:\n  production:\ntests: []\n';
const load = (extra: string) => parseSuiteConfig(base + extra, FILE);
function failure(extra: string): string {
  try {
    load(extra);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.message;
  }
  assert.fail('expected a ConfigError');
}

describe('code hosts in runset.config.yaml', () => {
  test('defaults: github.com, every environment, "runset ({env})", no path prefix', () => {
    const { codeHosts } = load('github:\n  repository: acme/shop\n  token: ${env:GH_TOKEN}\ngitlab:\n  project: 42\n  token: ${env:GL_TOKEN}\n');
    assert.deepEqual(codeHosts.github, {
      owner: 'acme', repo: 'shop', auth: { kind: 'token', token: { kind: 'env', name: 'GH_TOKEN' } }, environments: null,
      apiUrl: 'https://api.github.com', checkName: 'runset ({env})', pathPrefix: '',
    });
    assert.deepEqual(codeHosts.gitlab, { project: '42', token: { kind: 'env', name: 'GL_TOKEN' }, environments: null, apiUrl: 'https://gitlab.com/api/v4', statusName: 'runset ({env})' });
    assert.deepEqual(parseSuiteConfig(base, FILE).codeHosts, { github: null, gitlab: null });
  });

  test('a GitHub App, Enterprise address, environments and prefix', () => {
    const { codeHosts } = load('github:\n  repository: acme/shop\n  app:\n    id: 12\n    privateKey: ${env:APP_KEY}\n  apiUrl: https://github.example.com/api/v3/\n  environments: [production]\n  pathPrefix: /e2e/tests\n');
    assert.deepEqual(codeHosts.github?.auth, { kind: 'app', appId: '12', privateKey: { kind: 'env', name: 'APP_KEY' }, installationId: null });
    assert.equal(codeHosts.github?.apiUrl, 'https://github.example.com/api/v3');
    assert.equal(codeHosts.github?.pathPrefix, 'e2e/tests/');
  });

  test('mistakes are named with what is accepted', () => {
    assert.match(failure('github:\n  token: ${env:GH_TOKEN}\n'), /github\.repository: missing; expected the repository as owner\/name/);
    assert.match(failure('github:\n  repository: shop\n  token: ${env:GH_TOKEN}\n'), /github\.repository: .*expected the repository as owner\/name/);
    assert.match(failure('github:\n  repository: acme/shop\n  token: ghp_abc\n'), /github\.token: a secret written in clear is not a reference; expected exactly "\$\{env:NAME\}"/);
    assert.match(failure('github:\n  repository: acme/shop\n'), /github: neither token nor app is given; expected exactly one of token/);
    assert.match(failure('github:\n  repository: acme/shop\n  token: ${env:A}\n  app: { id: 1, privateKey: "${env:B}" }\n'), /github: both token and app are given/);
    assert.match(failure('gitlab:\n  project: 1\n  token: ${env:T}\n  environments: [qa]\n'), /gitlab\.environments\[0\]: unknown environment "qa"/);
    assert.match(failure('gitlab:\n  project: 1\n  token: ${env:T}\n  apiUrl: http://169.254.169.254/api/v4\n'), /gitlab\.apiUrl: .*expected an API address runset may reach/);
  });

  test('only a set with a commit label, of a listed environment, is reported', () => {
    const { codeHosts } = load('github:\n  repository: acme/shop\n  token: ${env:GH_TOKEN}\n  environments: [production]\ngitlab:\n  project: 1\n  token: ${env:T}\n');
    const event: SetEvent = { id: 1, setId: 's', env: 'production', event: 'set.started', status: 'RUNNING', previousStatus: null, commit: 'abc' };
    assert.deepEqual(codeHostTargets(codeHosts, event), ['github:check-run', 'gitlab:commit-status']);
    assert.deepEqual(codeHostTargets(codeHosts, { ...event, env: 'staging' }), ['gitlab:commit-status']);
    assert.deepEqual(codeHostTargets(codeHosts, { ...event, commit: null }), []);
  });
});
