/**
 * A key left out of runset.config.yaml takes the default the published schema
 * shows (src/config/config-defaults.ts, read by the loader and the schemas):
 * a file with every optional key left out loads to exactly the schema's
 * `default` values, and every `default` in the schema is one of them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSuiteConfig } from '../../src/config/suite.js';
import { configJsonSchema, type JsonSchema } from '../../src/config/config-json-schema.js';
import { CONFIG_DEFAULTS } from '../../src/config/config-defaults.js';
import { DEFAULT_SET_TIMEOUT_SECONDS } from '../../src/core/deadlines.js';

const BARE = `
environments:
  staging:
    variables: { BASE_URL: "https://staging.example.com" }
tests:
  - { name: health, type: http, request: { url: "{{BASE_URL}}/health" } }
  - { name: lint, type: command, run: [node, --version] }
webhooks:
  - { url: "https://hooks.example.com/runset", secret: "\${env:HOOK_SECRET}" }
github: { repository: acme/shop, token: "\${env:GITHUB_TOKEN}" }
gitlab: { project: 42, token: "\${env:GITLAB_TOKEN}" }
`;

/** The schema node at a path of property names (through a union's object branch, a list's items, a test type's `then`). */
function node(schema: JsonSchema, ...keys: string[]): JsonSchema {
  let current = schema;
  for (const key of keys) {
    const inObject = (s: JsonSchema): JsonSchema | undefined => (s.properties as Record<string, JsonSchema> | undefined)?.[key] ?? (s.patternProperties as Record<string, JsonSchema> | undefined)?.[key];
    const candidates = [current, ...((current.anyOf as JsonSchema[] | undefined) ?? []), (current.items as JsonSchema | undefined) ?? {}];
    const found = candidates.map(inObject).find((s) => s !== undefined);
    assert.ok(found, `no ${key} in the schema`);
    current = found;
  }
  return current;
}

function testTypeSchema(schema: JsonSchema, type: string): JsonSchema {
  const cases = node(schema, 'tests').items as { allOf: JsonSchema[] };
  const found = cases.allOf.find((c) => ((c.if as JsonSchema).properties as Record<string, JsonSchema>).type?.const === type);
  return found?.then as JsonSchema;
}

test('a file with every optional key left out loads to the defaults the schema shows', () => {
  const schema = configJsonSchema();
  const config = parseSuiteConfig(BARE, '/tmp/runset-defaults/runset.config.yaml');
  const env = config.environments.get('staging')!;
  const environment = node(schema, 'environments', '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$');
  assert.equal(env.failOnFlaky, node(environment, 'failOnFlaky').default);
  assert.equal(env.allowPrivateTargets, node(environment, 'allowPrivateTargets').default);
  assert.equal(env.allowSuiteUploads, node(environment, 'allowSuiteUploads').default);
  assert.equal(node(environment, 'setTimeout').default, '60m');
  assert.equal(env.setTimeoutSeconds, DEFAULT_SET_TIMEOUT_SECONDS);

  const [http, command] = config.tests;
  const httpSchema = testTypeSchema(schema, 'http');
  assert.ok(http?.type === 'http' && command?.type === 'command');
  assert.equal(http.request.method, node(httpSchema, 'request', 'method').default);
  assert.equal(http.timeoutSeconds, node(httpSchema, 'timeoutSeconds').default);
  assert.equal(http.retries, node(httpSchema, 'retries').default);
  assert.equal(command.cwd, '/tmp/runset-defaults');
  assert.equal(node(testTypeSchema(schema, 'command'), 'cwd').default, '.');
  // A Playwright test's unset timeout and retries are its suite's own: the schema names no default.
  assert.equal(node(testTypeSchema(schema, 'playwright'), 'timeoutSeconds').default, undefined);

  const [hook] = config.webhooks;
  const hookSchema = ((node(schema, 'webhooks').anyOf as JsonSchema[]).find((branch) => branch.type === 'array')?.items ?? {}) as JsonSchema;
  assert.deepEqual(hook?.events, node(hookSchema, 'events').default);
  assert.equal(hook?.format, node(hookSchema, 'format').default);
  assert.equal(hook?.when, node(hookSchema, 'when').default);

  const { github, gitlab } = config.codeHosts;
  assert.equal(github?.apiUrl, node(schema, 'github', 'apiUrl').default);
  assert.equal(github?.checkName, node(schema, 'github', 'checkName').default);
  assert.equal(gitlab?.apiUrl, node(schema, 'gitlab', 'apiUrl').default);
  assert.equal(gitlab?.statusName, node(schema, 'gitlab', 'statusName').default);
});

test('every default in the published schema comes from CONFIG_DEFAULTS (or a framework adapter\'s worker count)', () => {
  const known = new Set<string>(Object.values(CONFIG_DEFAULTS).flatMap((group) => Object.values(group).map((value) => JSON.stringify(value))));
  known.add('1'); // mocha's and cucumber's defaultWorkers
  const found: unknown[] = [];
  JSON.stringify(configJsonSchema(), (key, value: unknown) => {
    if (key === 'default') found.push(value);
    return value;
  });
  assert.ok(found.length >= 20, `${found.length} defaults`);
  for (const value of found) assert.ok(known.has(JSON.stringify(value)), `default ${JSON.stringify(value)} is not in CONFIG_DEFAULTS`);
});
