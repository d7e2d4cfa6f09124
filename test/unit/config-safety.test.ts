import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ConfigError, parseSuiteConfig } from '../../src/config/suite.js';
import { dangerousVariableReason } from '../../src/config/dangerous-variables.js';
import { describeRule, globToRegExp, overrideRefusal, ruleAllows } from '../../src/config/override-rules.js';
import { RunsetError } from '../../src/core/errors.js';
import type { OverrideRule } from '../../src/core/types.js';
import { planTestRunSet } from '../../src/sets/plan.js';
import { planRerun } from '../../src/sets/rerun.js';
import { seal } from '../../src/secrets/index.js';

const FILE = '/srv/runset.config.yaml';
const TESTS = 'tests:\n  - { name: t, type: command, run: ["true"] }\n';

function configError(text: string): ConfigError {
  try {
    parseSuiteConfig(text, FILE);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail('expected a ConfigError');
}

describe('dangerous variable names', () => {
  const refused = [
    'NODE_OPTIONS', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'LD_BIND_NOW', 'DYLD_INSERT_LIBRARIES', 'DYLD_LIBRARY_PATH',
    'BASH_ENV', 'ENV', 'PATH', 'PYTHONPATH', 'PYTHONSTARTUP', 'PERL5OPT', 'RUBYOPT', 'NODE_PATH', 'JAVA_TOOL_OPTIONS',
    'npm_config_node_options', 'NPM_CONFIG_SCRIPT_SHELL', 'path', 'Node_Options', 'GCONV_PATH', 'PS4', 'IFS',
  ];
  for (const name of refused) {
    test(`${name} is a config error naming it and saying why`, () => {
      const error = configError(`environments:\n  staging:\n    variables:\n      ${name}: x\n${TESTS}`);
      assert.equal(error.path, `environments.staging.variables.${name}`);
      assert.match(error.problem, new RegExp(`^${name} cannot be declared: .+, so an override of it could run any code on the workers$`));
      assert.match(error.expected, /a variable your tests read, under a name of its own \(APP_ENV, not ENV\); never NODE_OPTIONS, .*LD_\*, DYLD_\*/);
      assert.equal(error.line, 4);
    });
  }

  test('the constrained form is refused as well', () => {
    const error = configError(`environments:\n  s:\n    variables:\n      LD_PRELOAD: { value: x, allow: [x] }\n${TESTS}`);
    assert.equal(error.path, 'environments.s.variables.LD_PRELOAD');
  });

  test('ordinary names pass', () => {
    for (const name of ['BASE_URL', 'APP_ENV', 'ENVIRONMENT', 'API_PATH', 'MY_NODE_OPTIONS', 'LDAP_URL', 'PATHNAME', 'NODE_ENV']) {
      assert.equal(dangerousVariableReason(name), null, name);
    }
    const config = parseSuiteConfig(`environments:\n  s:\n    variables:\n      NODE_ENV: test\n      LDAP_URL: ldap://x\n${TESTS}`, FILE);
    assert.deepEqual(Object.keys(config.environments.get('s')?.variables ?? {}), ['NODE_ENV', 'LDAP_URL']);
  });
});

describe('constrained overrides: config', () => {
  test('{value, allow, pattern} declares the value and the rule; the plain form keeps working', () => {
    const config = parseSuiteConfig(
      'environments:\n  staging:\n    variables:\n' +
        '      BASE_URL: { value: https://staging.example.com, allow: ["https://*.preview.example.com", "https://staging.example.com"] }\n' +
        '      REGION: { value: eu, pattern: "eu|us" }\n' +
        '      TOKEN: { value: "${env:TOKEN}", pattern: "tok_[a-z0-9]+" }\n' +
        '      PLAIN: { value: x }\n' +
        '      OLD: just a string\n' +
        TESTS,
      FILE,
    );
    const staging = config.environments.get('staging');
    assert.deepEqual(staging?.variables, {
      BASE_URL: { kind: 'plain', value: 'https://staging.example.com' },
      REGION: { kind: 'plain', value: 'eu' },
      TOKEN: { kind: 'env', name: 'TOKEN' },
      PLAIN: { kind: 'plain', value: 'x' },
      OLD: { kind: 'plain', value: 'just a string' },
    });
    assert.deepEqual(staging?.overrideRules, {
      BASE_URL: { allow: ['https://*.preview.example.com', 'https://staging.example.com'], pattern: null },
      REGION: { allow: [], pattern: 'eu|us' },
      TOKEN: { allow: [], pattern: 'tok_[a-z0-9]+' },
    });
  });

  test('mistakes in the rule are config errors saying what is accepted', () => {
    const bad = configError(`environments:\n  s:\n    variables:\n      A: { value: x, pattern: "(" }\n${TESTS}`);
    assert.equal(bad.path, 'environments.s.variables.A.pattern');
    assert.match(bad.problem, /pattern "\(" is not a valid regular expression/);
    const typo = configError(`environments:\n  s:\n    variables:\n      A: { value: x, allows: [x] }\n${TESTS}`);
    assert.equal(typo.path, 'environments.s.variables.A.allows');
    assert.match(typo.problem, /unknown key "allows" \(did you mean "allow"\?\)/);
    const missing = configError(`environments:\n  s:\n    variables:\n      A: { allow: [x] }\n${TESTS}`);
    assert.equal(missing.path, 'environments.s.variables.A.value');
    const number = configError(`environments:\n  s:\n    variables:\n      A: { value: 8080, allow: ["80*"] }\n${TESTS}`);
    assert.match(number.expected, /put it in quotes: "8080"/);
  });
});

describe('constrained overrides: globs and patterns', () => {
  const previews: OverrideRule = { allow: ['https://*.preview.example.com', 'https://staging.example.com'], pattern: null };

  test('a glob matches the whole value; * stays inside one part of a URL', () => {
    for (const ok of ['https://pr-42.preview.example.com', 'https://a.b.preview.example.com', 'https://staging.example.com']) {
      assert.ok(ruleAllows(previews, ok), ok);
    }
    const refused = [
      'https://evil.example#.preview.example.com',
      'https://evil.example?.preview.example.com',
      'https://evil.example/.preview.example.com',
      'https://evil.example\\.preview.example.com',
      'https://user@evil.example@x.preview.example.com',
      'https://evil.example .preview.example.com',
      'https://staging.example.com.evil.example',
      'https://staging.example.com/path',
      'http://pr-1.preview.example.com',
      'https://pr-1.preview.example.comx',
      'xhttps://staging.example.com',
    ];
    for (const value of refused) assert.equal(ruleAllows(previews, value), false, value);
  });

  test('** matches anything; a backslash escapes; regex characters in a glob are literal', () => {
    assert.ok(ruleAllows({ allow: ['https://staging.example.com/**'], pattern: null }, 'https://staging.example.com/a/b?c#d'));
    assert.equal(globToRegExp('a.b').test('axb'), false);
    assert.ok(globToRegExp('v\\*').test('v*'));
    assert.equal(globToRegExp('v\\*').test('v1'), false);
    assert.ok(globToRegExp('(x)+[y]{2}|z').test('(x)+[y]{2}|z'));
  });

  test('a pattern is a regular expression on the whole value', () => {
    const rule: OverrideRule = { allow: [], pattern: 'eu|us' };
    assert.ok(ruleAllows(rule, 'eu'));
    assert.equal(ruleAllows(rule, 'eu-west'), false, 'anchored on the whole value, even across |');
    assert.ok(ruleAllows({ allow: ['x'], pattern: 'y' }, 'y'), 'either form admits a value');
  });

  test('the refusal names the variable and the allowed forms, and never quotes a secret value', () => {
    assert.equal(
      overrideRefusal('BASE_URL', 'https://evil.example', previews, false),
      'envOverride.BASE_URL: "https://evil.example" is not an override BASE_URL allows; allowed: a value matching one of the globs ' +
        '"https://*.preview.example.com", "https://staging.example.com" (* for any characters but / ? # @ \\ and spaces, ** for any characters)',
    );
    const secret = overrideRefusal('TOKEN', 'sekrit-value', { allow: [], pattern: 'tok_.+' }, true) ?? '';
    assert.ok(!secret.includes('sekrit-value'));
    assert.match(secret, /^envOverride\.TOKEN: the value is not an override TOKEN allows; allowed: a value matching the regular expression "tok_\.\+"/);
    assert.match(describeRule({ allow: ['a'], pattern: 'b' }), /^a value matching the glob "a" \(.*\), or the regular expression "b"/);
  });
});

describe('constrained overrides: planning a set', () => {
  const suite = parseSuiteConfig(
    'environments:\n  staging:\n    variables:\n' +
      '      BASE_URL: { value: https://staging.example.com, allow: ["https://*.preview.example.com", "https://staging.example.com"] }\n' +
      '      TOKEN: { value: "${env:TOKEN}", pattern: "tok_[a-z0-9]+" }\n' +
      TESTS,
    FILE,
  );
  const opts = { secretKey: randomBytes(32), keyId: null };

  test('an allowed override makes the set; one outside is 400 override_not_allowed', () => {
    const set = planTestRunSet(suite, { env: 'staging', envOverride: { BASE_URL: 'https://pr-7.preview.example.com', TOKEN: 'tok_abc' } }, opts);
    assert.deepEqual(set.variables.BASE_URL, { kind: 'plain', value: 'https://pr-7.preview.example.com' });
    const refused = (() => {
      try {
        planTestRunSet(suite, { env: 'staging', envOverride: { BASE_URL: 'http://169.254.169.254' } }, opts);
      } catch (err) {
        return err;
      }
    })();
    assert.ok(refused instanceof RunsetError);
    assert.equal(refused.code, 'override_not_allowed');
    assert.equal(refused.toProblem().status, 400);
    assert.match(refused.message, /^envOverride\.BASE_URL: "http:\/\/169\.254\.169\.254" is not an override BASE_URL allows; allowed: /);
    assert.throws(() => planTestRunSet(suite, { env: 'staging', envOverride: { TOKEN: 'nope' } }, opts), { code: 'override_not_allowed' });
  });

  test('run again of a set whose override the config no longer allows is a rerun_conflict', () => {
    const earlier = { id: 'set-1', env: 'staging', overrides: { TOKEN: { kind: 'sealed' as const, box: seal('old-token', opts.secretKey) } }, labels: {} };
    assert.throws(() => planRerun(suite, earlier, opts), (err: unknown) => {
      assert.ok(err instanceof RunsetError);
      assert.equal(err.code, 'rerun_conflict');
      assert.match(err.message, /no longer allows .*envOverride\.TOKEN: the value is not an override TOKEN allows/);
      assert.ok(!err.message.includes('old-token'));
      return true;
    });
  });
});
