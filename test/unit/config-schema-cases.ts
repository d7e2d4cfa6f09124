/**
 * Files the loader refuses, for test/unit/config-schema.test.ts: those the
 * published JSON Schema must refuse at the same path, and those it cannot
 * (the loader-only rules of src/config/config-json-schema.ts). Each is a whole
 * runset.config.yaml read as if it lay in test/fixtures/configs/, whose
 * folders (e2e/, suite/, postman/) its tests may name.
 */

/** A file refused by the loader at `path` (as its ConfigError writes it). */
export interface RefusedConfig {
  name: string;
  yaml: string;
  path: string;
}

/** A file refused by the loader that the schema accepts: `rule` is the number of the LOADER_ONLY_RULES entry it shows. */
export interface LoaderOnlyConfig extends RefusedConfig {
  rule: number;
}

const ENVIRONMENTS = `environments:
  staging:
    variables: { BASE_URL: https://staging.example.com }
`;

/** The usual environment and the given YAML list of tests. */
const withTests = (tests: string): string => `${ENVIRONMENTS}tests:\n${tests}`;
/** The usual environment, no tests, and the given top-level keys. */
const withTop = (top: string): string => `${ENVIRONMENTS}tests: []\n${top}`;
/** One environment `staging` with the given mapping under it. */
const withEnvironment = (body: string): string => `environments:\n  staging:\n${body}tests: []\n`;

const HTTP = '    type: http\n    request: { url: "{{BASE_URL}}/" }\n';

export const SCHEMA_REFUSES: readonly RefusedConfig[] = [
  { name: 'an unknown top-level key', yaml: withTop('webhook: []\n'), path: 'webhook' },
  { name: 'no tests key', yaml: ENVIRONMENTS, path: 'tests' },
  { name: 'no environments key', yaml: 'tests: []\n', path: 'environments' },
  { name: 'no environment at all', yaml: 'environments: {}\ntests: []\n', path: 'environments' },
  { name: 'an environment name with a space', yaml: 'environments:\n  "stag ing":\ntests: []\n', path: 'environments["stag ing"]' },
  { name: 'an environment name starting with "-"', yaml: 'environments:\n  -staging:\ntests: []\n', path: 'environments["-staging"]' },
  { name: 'an environment name of 129 characters', yaml: `environments:\n  ${'e'.repeat(129)}:\ntests: []\n`, path: `environments.${'e'.repeat(129)}` },
  { name: 'an unknown environment key', yaml: withEnvironment('    maxFailure: 3\n'), path: 'environments.staging.maxFailure' },
  { name: 'maxFailures as a string', yaml: withEnvironment('    maxFailures: "3"\n'), path: 'environments.staging.maxFailures' },
  { name: 'maxConcurrentSets out of range', yaml: withEnvironment('    maxConcurrentSets: 1001\n'), path: 'environments.staging.maxConcurrentSets' },
  { name: 'failOnFlaky as a string', yaml: withEnvironment('    failOnFlaky: "yes"\n'), path: 'environments.staging.failOnFlaky' },
  { name: 'variables as a list', yaml: withEnvironment('    variables: [BASE_URL]\n'), path: 'environments.staging.variables' },
  { name: 'a variable name starting with a digit', yaml: withEnvironment('    variables: { 1URL: x }\n'), path: 'environments.staging.variables["1URL"]' },
  { name: 'a variable name with "-"', yaml: withEnvironment('    variables: { BASE-URL: x }\n'), path: 'environments.staging.variables.BASE-URL' },
  { name: 'a variable named __proto__', yaml: withEnvironment('    variables: { __proto__: x }\n'), path: 'environments.staging.variables.__proto__' },
  { name: 'a variable value as a number', yaml: withEnvironment('    variables: { PORT: 8080 }\n'), path: 'environments.staging.variables.PORT' },
  { name: 'an unknown key of a constrained variable', yaml: withEnvironment('    variables: { URL: { value: x, allows: [y] } }\n'), path: 'environments.staging.variables.URL.allows' },
  { name: 'a constrained variable without value', yaml: withEnvironment('    variables: { URL: { allow: [y] } }\n'), path: 'environments.staging.variables.URL.value' },
  { name: 'too many allow globs (101)', yaml: withEnvironment(`    variables: { URL: { value: x, allow: [${Array.from({ length: 101 }, (_, i) => `g${i}`).join(', ')}] } }\n`), path: 'environments.staging.variables.URL.allow' },
  { name: 'NODE_OPTIONS declared', yaml: withEnvironment('    variables: { NODE_OPTIONS: --max-old-space-size=4096 }\n'), path: 'environments.staging.variables.NODE_OPTIONS' },
  { name: 'an LD_* variable in lower case', yaml: withEnvironment('    variables: { ld_debug: all }\n'), path: 'environments.staging.variables.ld_debug' },
  { name: 'a test that is not a mapping', yaml: withTests('  - just a string\n'), path: 'tests[0]' },
  { name: 'a test without type', yaml: withTests('  - name: t\n    request: { url: "{{BASE_URL}}/" }\n'), path: 'tests[0].type' },
  { name: 'an unknown test type', yaml: withTests('  - name: t\n    type: selenium\n'), path: 'tests[0].type' },
  { name: 'a test without name', yaml: withTests(HTTP.replace('    type', '  - type')), path: 'tests[0].name' },
  { name: 'an empty test name', yaml: withTests(`  - name: ""\n${HTTP}`), path: 'tests[0].name' },
  { name: 'an http test without url', yaml: withTests('  - name: t\n    type: http\n    request: { method: GET }\n'), path: 'tests[0].request.url' },
  { name: 'a key of another test type', yaml: withTests(`  - name: t\n${HTTP}    dir: e2e\n`), path: 'tests[0].dir' },
  { name: 'an unknown key of a request', yaml: withTests('  - name: t\n    type: http\n    request: { urll: "{{BASE_URL}}/" }\n'), path: 'tests[0].request.urll' },
  { name: 'a status out of range', yaml: withTests(`  - name: t\n${HTTP}    expect: { status: 99 }\n`), path: 'tests[0].expect.status' },
  { name: 'an invalid header name', yaml: withTests('  - name: t\n    type: http\n    request: { url: "{{BASE_URL}}/", headers: { "X Token": a } }\n'), path: 'tests[0].request.headers["X Token"]' },
  { name: 'an unknown HTTP method', yaml: withTests('  - name: t\n    type: http\n    request: { url: "{{BASE_URL}}/", method: FETCH }\n'), path: 'tests[0].request.method' },
  { name: 'a body with GET', yaml: withTests('  - name: t\n    type: http\n    request: { url: "{{BASE_URL}}/", body: { a: 1 } }\n'), path: 'tests[0].request.body' },
  { name: 'a body with head in lower case', yaml: withTests('  - name: t\n    type: http\n    request: { url: "{{BASE_URL}}/", method: head, body: x }\n'), path: 'tests[0].request.body' },
  { name: 'tags as a string', yaml: withTests(`  - name: t\n${HTTP}    tags: smoke\n`), path: 'tests[0].tags' },
  { name: 'an empty environments list', yaml: withTests(`  - name: t\n${HTTP}    environments: []\n`), path: 'tests[0].environments' },
  { name: 'timeoutSeconds of 0', yaml: withTests(`  - name: t\n${HTTP}    timeoutSeconds: 0\n`), path: 'tests[0].timeoutSeconds' },
  { name: 'retries of 1.5', yaml: withTests(`  - name: t\n${HTTP}    retries: 1.5\n`), path: 'tests[0].retries' },
  { name: 'retries of 11', yaml: withTests(`  - name: t\n${HTTP}    retries: 11\n`), path: 'tests[0].retries' },
  { name: 'a command as a shell string', yaml: withTests('  - name: t\n    type: command\n    run: npm run contract\n'), path: 'tests[0].run' },
  { name: 'an empty command', yaml: withTests('  - name: t\n    type: command\n    run: []\n'), path: 'tests[0].run' },
  { name: 'a playwright test without dir', yaml: withTests('  - name: t\n    type: playwright\n'), path: 'tests[0].dir' },
  { name: 'playwright workers of 65', yaml: withTests('  - name: t\n    type: playwright\n    dir: e2e\n    workers: 65\n'), path: 'tests[0].workers' },
  { name: 'python on a vitest test', yaml: withTests('  - name: t\n    type: vitest\n    dir: suite\n    python: python3\n'), path: 'tests[0].python' },
  { name: 'a newman test without collection', yaml: withTests('  - name: t\n    type: newman\n    dir: postman\n'), path: 'tests[0].collection' },
  { name: 'retries on a jest test', yaml: withTests('  - name: t\n    type: jest\n    dir: suite\n    retries: 1\n'), path: 'tests[0].retries' },
  { name: 'retries on a newman test', yaml: withTests('  - name: t\n    type: newman\n    dir: postman\n    collection: shop.postman_collection.json\n    retries: 1\n'), path: 'tests[0].retries' },
  { name: 'webhooks as a mapping', yaml: withTop('webhooks: { url: "https://hooks.example.com" }\n'), path: 'webhooks' },
  { name: 'a webhook without url', yaml: withTop('webhooks:\n  - secret: "${env:S}"\n'), path: 'webhooks[0].url' },
  { name: 'an unknown webhook event', yaml: withTop('webhooks:\n  - { url: "https://hooks.example.com", secret: "${env:S}", events: [set.done] }\n'), path: 'webhooks[0].events[0]' },
  { name: 'a webhook name with a space', yaml: withTop('webhooks:\n  - { name: "team alerts", url: "https://hooks.example.com", secret: "${env:S}" }\n'), path: 'webhooks[0].name' },
  { name: 'a webhook secret written in clear', yaml: withTop('webhooks:\n  - { url: "https://hooks.example.com", secret: hunter2 }\n'), path: 'webhooks[0].secret' },
  { name: 'a json webhook without secret', yaml: withTop('webhooks:\n  - { url: "https://hooks.example.com", format: json }\n'), path: 'webhooks[0].secret' },
  { name: 'a github repository without owner', yaml: withTop('github: { repository: shop, token: "${env:T}" }\n'), path: 'github.repository' },
  { name: 'a github token written in clear', yaml: withTop('github: { repository: acme/shop, token: ghp_x }\n'), path: 'github.token' },
  { name: 'github with both token and app', yaml: withTop('github: { repository: acme/shop, token: "${env:T}", app: { id: 1, privateKey: "${env:K}" } }\n'), path: 'github' },
  { name: 'github with neither token nor app', yaml: withTop('github: { repository: acme/shop }\n'), path: 'github' },
  { name: 'a github app key written in clear', yaml: withTop('github: { repository: acme/shop, app: { id: 1, privateKey: "-----BEGIN" } }\n'), path: 'github.app.privateKey' },
  { name: 'a gitlab project of 0', yaml: withTop('gitlab: { project: 0, token: "${env:T}" }\n'), path: 'gitlab.project' },
  { name: 'a gitlab token written in clear', yaml: withTop('gitlab: { project: 42, token: glpat-x }\n'), path: 'gitlab.token' },
];

export const LOADER_ONLY: readonly LoaderOnlyConfig[] = [
  { rule: 1, name: 'two tests of one name', yaml: withTests(`  - name: t\n${HTTP}  - name: t\n${HTTP}`), path: 'tests[1].name' },
  { rule: 1, name: 'two webhooks of one name', yaml: withTop('webhooks:\n  - { name: a, url: "https://a.example.com", format: slack }\n  - { name: a, url: "https://b.example.com", format: slack }\n'), path: 'webhooks[1].name' },
  { rule: 2, name: 'a test naming an undeclared environment', yaml: withTests(`  - name: t\n${HTTP}    environments: [prod]\n`), path: 'tests[0].environments[0]' },
  { rule: 2, name: 'github naming an undeclared environment', yaml: withTop('github: { repository: acme/shop, token: "${env:T}", environments: [prod] }\n'), path: 'github.environments[0]' },
  { rule: 3, name: 'an undeclared placeholder', yaml: withTests('  - name: t\n    type: http\n    request: { url: "{{BASE_URL}}/{{TENANT}}" }\n'), path: 'tests[0].request.url' },
  { rule: 4, name: 'a playwright dir that does not exist', yaml: withTests('  - name: t\n    type: playwright\n    dir: no-such-folder\n'), path: 'tests[0].dir' },
  { rule: 4, name: 'a newman collection that does not exist', yaml: withTests('  - name: t\n    type: newman\n    dir: postman\n    collection: none.json\n'), path: 'tests[0].collection' },
  { rule: 5, name: 'a junit glob outside the folder', yaml: withTests('  - name: t\n    type: command\n    run: [make]\n    junit: ../reports/*.xml\n'), path: 'tests[0].junit' },
  { rule: 6, name: 'a relative request url', yaml: withTests('  - name: t\n    type: http\n    request: { url: /health }\n'), path: 'tests[0].request.url' },
  { rule: 6, name: 'a webhook to a metadata address', yaml: withTop('webhooks:\n  - { url: "http://169.254.169.254/hook", format: slack }\n'), path: 'webhooks[0].url' },
  { rule: 7, name: 'a grep that does not compile', yaml: withTests('  - name: t\n    type: playwright\n    dir: e2e\n    grep: "(checkout"\n'), path: 'tests[0].grep' },
  { rule: 8, name: 'a setTimeout of 8 days', yaml: withEnvironment('    setTimeout: 8d\n'), path: 'environments.staging.setTimeout' },
  { rule: 9, name: 'half a secret reference', yaml: withEnvironment('    variables: { TOKEN: "Bearer ${env:TOKEN}" }\n'), path: 'environments.staging.variables.TOKEN' },
  { rule: 10, name: 'an empty program name', yaml: withTests('  - name: t\n    type: command\n    run: ["", x]\n'), path: 'tests[0].run[0]' },
  { rule: 11, name: 'when: failure with set.started', yaml: withTop('webhooks:\n  - { url: "https://a.example.com", format: slack, when: failure, events: [set.started] }\n'), path: 'webhooks[0].when' },
];

/** Loader-only rules that no parsed file can show: the schema sees the value after YAML has been read. */
export const RULES_SEEN_BEFORE_THE_SCHEMA: readonly number[] = [12];
