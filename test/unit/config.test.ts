import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadSuiteConfig, parseSuiteConfig, testsForEnvironment } from '../../src/config/suite.js';
import type { CommandTestSpec, HttpTestSpec } from '../../src/core/types.js';

const FILE = '/srv/suite/runset.config.yaml';

const ENVIRONMENTS = `environments:
  staging:
    variables:
      BASE_URL: https://staging.example.com
      API_TOKEN: \${env:STAGING_API_TOKEN}
  preview:
    variables:
      BASE_URL: https://preview.example.com
`;

/** A file with the usual environments and the given tests (YAML list items, indented by 2). */
function withTests(tests: string): string {
  return `${ENVIRONMENTS}tests:\n${tests}`;
}

const HTTP_OK = `  - name: ok
    type: http
    request: { url: "{{BASE_URL}}/" }
`;

/** Asserts that parsing fails at `where` with an "expected" part matching `expected`. */
function assertConfigError(text: string, where: string, expected: RegExp, problem?: RegExp): ConfigError {
  let caught: unknown;
  try {
    parseSuiteConfig(text, FILE);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigError, `expected a ConfigError, got ${String(caught)}`);
  assert.equal(caught.file, FILE);
  assert.equal(caught.path, where, caught.message);
  assert.match(caught.expected, expected, caught.message);
  if (problem) assert.match(caught.problem, problem, caught.message);
  assert.equal(caught.message, `${FILE}: ${where}: ${caught.problem}; expected ${caught.expected}`);
  return caught;
}

describe('parseSuiteConfig: a valid file', () => {
  const text = withTests(`  - name: home page answers
    type: http
    request: { method: post, url: "{{BASE_URL}}/", headers: { X-Token: "{{ API_TOKEN }}" }, body: { user: "{{BASE_URL}}" } }
    expect: { status: 200, bodyContains: Welcome, json: { ok: true } }
    tags: [smoke]
    environments: [staging]
  - name: contract
    type: command
    run: [npm, run, contract]
    cwd: scripts
    timeoutSeconds: 300
    retries: 1
  - name: bare
    type: http
    request: { url: "https://example.com/health" }
`);

  test('round-trips every field, with defaults applied', () => {
    const config = parseSuiteConfig(text, FILE);
    assert.equal(config.file, FILE);
    assert.equal(config.dir, '/srv/suite');
    assert.deepEqual(config.tests[0], {
      name: 'home page answers',
      type: 'http',
      request: {
        method: 'POST',
        url: '{{BASE_URL}}/',
        headers: { 'X-Token': '{{ API_TOKEN }}' },
        body: { user: '{{BASE_URL}}' },
      },
      expect: { status: 200, bodyContains: 'Welcome', json: { ok: true } },
      tags: ['smoke'],
      environments: ['staging'],
      timeoutSeconds: 120,
      retries: 0,
    } satisfies HttpTestSpec);
    assert.deepEqual(config.tests[1], {
      name: 'contract',
      type: 'command',
      run: ['npm', 'run', 'contract'],
      cwd: '/srv/suite/scripts',
      tags: [],
      timeoutSeconds: 300,
      retries: 1,
    } satisfies CommandTestSpec);
    assert.deepEqual(config.tests[2], {
      name: 'bare',
      type: 'http',
      request: { method: 'GET', url: 'https://example.com/health' },
      expect: {},
      tags: [],
      timeoutSeconds: 120,
      retries: 0,
    } satisfies HttpTestSpec);
    assert.equal('environments' in (config.tests[2] ?? {}), false);
  });

  test('parses ${env:NAME} as a reference and anything else as plain', () => {
    const config = parseSuiteConfig(text, FILE);
    assert.deepEqual([...config.environments.keys()], ['staging', 'preview']);
    assert.deepEqual(config.environments.get('staging'), {
      name: 'staging',
      variables: {
        BASE_URL: { kind: 'plain', value: 'https://staging.example.com' },
        API_TOKEN: { kind: 'env', name: 'STAGING_API_TOKEN' },
      },
      maxFailures: null,
      maxConcurrentSets: null,
      setTimeoutSeconds: 3600,
      failOnFlaky: false,
      allowPrivateTargets: false,
      allowSuiteUploads: false,
      overrideRules: {},
    });
  });

  test('accepts an environment without variables', () => {
    const config = parseSuiteConfig('environments:\n  preview:\n  local: { variables: {} }\ntests: []\n', FILE);
    assert.deepEqual(config.environments.get('preview'), { name: 'preview', variables: {}, maxFailures: null, maxConcurrentSets: null, setTimeoutSeconds: 3600, failOnFlaky: false, allowPrivateTargets: false, allowSuiteUploads: false, overrideRules: {} });
    assert.deepEqual(config.environments.get('local'), { name: 'local', variables: {}, maxFailures: null, maxConcurrentSets: null, setTimeoutSeconds: 3600, failOnFlaky: false, allowPrivateTargets: false, allowSuiteUploads: false, overrideRules: {} });
  });

  test('maxFailures: a whole number from 1 on an environment; anything else is refused, saying what is accepted', () => {
    const config = parseSuiteConfig('environments:\n  ci: { maxFailures: 3 }\ntests: []\n', FILE);
    assert.equal(config.environments.get('ci')?.maxFailures, 3);
    for (const bad of ['0', '1.5', '"3"']) {
      assert.throws(
        () => parseSuiteConfig(`environments:\n  ci: { maxFailures: ${bad} }\ntests: []\n`, FILE),
        (err: Error) => /environments\.ci\.maxFailures/.test(err.message) && /whole number/.test(err.message),
        `maxFailures: ${bad}`,
      );
    }
  });

  test('x- keys hold anchors that tests merge with <<', () => {
    const config = parseSuiteConfig(
      `${ENVIRONMENTS}x-slow: &slow\n  timeoutSeconds: 600\n  retries: 2\ntests:\n  - <<: *slow\n    name: a\n    type: command\n    run: [x]\n`,
      FILE,
    );
    assert.deepEqual([config.tests[0]?.timeoutSeconds, config.tests[0]?.retries], [600, 2]);
  });

  test('is frozen, environments map included', () => {
    const config = parseSuiteConfig(text, FILE);
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.tests));
    const http = config.tests[0] as HttpTestSpec;
    assert.ok(Object.isFrozen(http.request.headers));
    assert.ok(Object.isFrozen(http.expect.json));
    assert.throws(() => http.tags.push('x'), TypeError);
    assert.throws(() => (config.environments as Map<string, unknown>).set('x', {}), TypeError);
    assert.ok(Object.isFrozen(config.environments.get('staging')?.variables));
  });

  test('testsForEnvironment keeps tests without a list or naming the environment, in file order', () => {
    const config = parseSuiteConfig(text, FILE);
    assert.deepEqual(testsForEnvironment(config, 'staging').map((t) => t.name), ['home page answers', 'contract', 'bare']);
    assert.deepEqual(testsForEnvironment(config, 'preview').map((t) => t.name), ['contract', 'bare']);
  });

  test('loadSuiteConfig reads a file and resolves cwd from its folder', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'runset-config-'));
    try {
      const file = path.join(dir, 'runset.config.yaml');
      writeFileSync(file, text);
      const config = loadSuiteConfig(file);
      assert.equal(config.file, file);
      assert.equal((config.tests[1] as CommandTestSpec).cwd, path.join(dir, 'scripts'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('loadSuiteConfig reports a missing file as a ConfigError', () => {
    assert.throws(() => loadSuiteConfig('/nonexistent/runset.config.yaml'), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /^\/nonexistent\/runset\.config\.yaml: \(file\): no such file \(ENOENT\); expected /);
      return true;
    });
  });
});

describe('parseSuiteConfig: errors name the file, the path and what is accepted', () => {
  test('missing url', () => {
    const error = assertConfigError(withTests('  - name: a\n    type: http\n    request: { method: GET }\n'), 'tests[0].request.url', /a URL string such as "\{\{BASE_URL\}\}\/health"/, /^missing$/);
    assert.equal(error.line, 12); // the `request:` line: url is missing from that mapping
  });

  test('wrong types: a number where a string goes, a fraction where a whole number goes', () => {
    assertConfigError(withTests(`${HTTP_OK}    retries: 1.5\n`), 'tests[0].retries', /whole number of extra tries from 0 to 10/);
    assertConfigError(withTests(`${HTTP_OK}    timeoutSeconds: 0\n`), 'tests[0].timeoutSeconds', /positive number of seconds/);
    assertConfigError(withTests(`${HTTP_OK}    tags: smoke\n`), 'tests[0].tags', /list of tags/);
    assertConfigError(withTests('  - name: a\n    type: command\n    run: [sleep, 5]\n'), 'tests[0].run[1]', /put it in quotes: "5"/);
    assertConfigError(withTests('  - name: a\n    type: http\n    request: { url: "{{BASE_URL}}/" }\n    expect: { status: ok }\n'), 'tests[0].expect.status', /HTTP status code/);
  });

  test('a shell string as run is rejected with an argv suggestion', () => {
    assertConfigError(withTests('  - name: a\n    type: command\n    run: npm run contract\n'), 'tests[0].run', /argv list such as \[npm, run, contract\]/, /shell/);
  });

  test('unknown keys are named, with the accepted ones', () => {
    assertConfigError(
      withTests('  - name: a\n    type: http\n    request: { urll: "{{BASE_URL}}/" }\n'),
      'tests[0].request.urll',
      /one of the keys method, url, headers, body/,
      /unknown key "urll" \(did you mean "url"\?\)/,
    );
    assertConfigError(`${withTests(HTTP_OK)}extra: 1\n`, 'extra', /one of the keys environments, tests/);
    assertConfigError(withTests('  - name: a\n    type: command\n    run: [x]\n    request: {}\n'), 'tests[0].request', /one of the keys name, type, run, cwd/);
  });

  test('duplicate test names', () => {
    assertConfigError(withTests(`${HTTP_OK}${HTTP_OK}`), 'tests[1].name', /a name unique in the file/, /duplicate name "ok" \(already used by tests\[0\]\)/);
  });

  test('an environment a test names must be declared', () => {
    assertConfigError(withTests(`${HTTP_OK}    environments: [staging, prod]\n`), 'tests[0].environments[1]', /one of the declared environments: staging, preview/, /"prod"/);
  });

  test('a placeholder must be declared in every environment the test runs in', () => {
    const text = withTests('  - name: a\n    type: http\n    request: { url: "{{BASE_URL}}/", headers: { Authorization: "Bearer {{API_TOKEN}}" } }\n');
    assertConfigError(text, 'tests[0].request.headers.Authorization', /declared in all: BASE_URL.*declare API_TOKEN in preview/, /\{\{API_TOKEN\}\} is not declared in environment "preview"/);
    // Limiting the test to staging makes it valid.
    assert.doesNotThrow(() => parseSuiteConfig(text.replace('type: http', 'type: http\n    environments: [staging]'), FILE));
    assertConfigError(withTests('  - name: a\n    type: http\n    request: { url: "{{BASE_URL}}/", method: POST, body: { a: ["{{NOPE}}"] } }\n'), 'tests[0].request.body.a[0]', /variable declared in every environment/);
  });

  test('variable values must be strings, and names must be names', () => {
    assertConfigError('environments:\n  s:\n    variables:\n      PORT: 8080\ntests: []\n', 'environments.s.variables.PORT', /a string value.*put it in quotes: "8080"/, /the number 8080/);
    assertConfigError('environments:\n  s:\n    variables:\n      DEBUG: true\ntests: []\n', 'environments.s.variables.DEBUG', /put it in quotes: "true"/);
    assertConfigError('environments:\n  s:\n    variables:\n      BASE-URL: x\ntests: []\n', 'environments.s.variables.BASE-URL', /variable name such as BASE_URL/);
    assertConfigError('environments:\n  s:\n    variables:\n      __proto__: x\ntests: []\n', 'environments.s.variables.__proto__', /variable name/);
    assertConfigError('environments:\n  s:\n    variables:\n      A: "Bearer ${env:X}"\ntests: []\n', 'environments.s.variables.A', /exactly "\$\{env:NAME\}"/);
  });

  test('an environment name of at most 128 characters (the API takes no longer one), and at most 100 allow globs', () => {
    parseSuiteConfig(`environments:\n  ${'e'.repeat(128)}:\ntests: []\n`, FILE);
    assertConfigError(`environments:\n  ${'e'.repeat(129)}:\ntests: []\n`, `environments.${'e'.repeat(129)}`, /at most 128 characters/, /invalid name/);
    const globs = Array.from({ length: 101 }, (_, i) => `g${i}`).join(', ');
    assertConfigError(`environments:\n  s:\n    variables: { URL: { value: x, allow: [${globs}] } }\ntests: []\n`, 'environments.s.variables.URL.allow', /list of globs/, /too many items \(101, at most 100\)/);
  });

  test('at least one environment', () => {
    assertConfigError('environments: {}\ntests: []\n', 'environments', /at least one environment/);
  });

  test('test type: missing or unknown', () => {
    assertConfigError(withTests('  - name: a\n'), 'tests[0].type', /one of "http", "command"/, /^missing$/);
    assertConfigError(withTests('  - name: a\n    type: htp\n'), 'tests[0].type', /one of "http", "command"/, /unknown test type "htp"/);
  });

  test('HTTP semantics: method, absolute URL, no body with GET', () => {
    assertConfigError(withTests('  - name: a\n    type: http\n    request: { url: "https://x/", method: GTE }\n'), 'tests[0].request.method', /GET, HEAD, POST/);
    assertConfigError(withTests('  - name: a\n    type: http\n    request: { url: "/health" }\n'), 'tests[0].request.url', /a URL string such as/);
    assertConfigError(withTests('  - name: a\n    type: http\n    request: { url: "https://x/", body: hi }\n'), 'tests[0].request.body', /a method such as POST/);
  });

  test('YAML syntax errors name the line', () => {
    const error = assertConfigError('environments:\n  s: {}\ntests:\n  - name: [\n', 'line 5, column 1', /valid YAML/, /invalid YAML/);
    assert.equal(error.line, 5);
    assertConfigError('environments:\n  s: {}\n  s: {}\ntests: []\n', 'line 3, column 3', /each key at most once/);
  });

  test('an empty file or a file that is not a mapping', () => {
    assertConfigError('', '(top level)', /"environments" and "tests"/, /empty/);
    assertConfigError('- a\n', '(top level)', /"environments" and "tests"/, /a list/);
  });
});
