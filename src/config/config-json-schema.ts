/**
 * The JSON Schema of runset.config.yaml that editors check the file with
 * (`# yaml-language-server: $schema=…`), built from the loader's own TypeBox
 * schemas (suite-schema.ts, suite-test-types.ts, suite-webhooks.ts,
 * suite-code-hosts.ts): one source, so the editor and `runset serve` judge
 * the shape of a file alike. `npm run build:schema` writes it to
 * schema/runset.config.schema.json (./build-json-schema.ts), and
 * test/unit/config-schema.test.ts fails when the committed file drifts.
 *
 * Draft-07, not 2020-12: every keyword used here is in draft-07, and it is the
 * draft every consumer reads well (the YAML extension of VS Code only reads
 * 2019-09/2020-12 since its 1.20 language server, JetBrains IDEs and the Ajv
 * default class read draft-07).
 *
 * On the way from the loader's schemas:
 * - `keyDescription`, runset's annotation that suite-explain.ts words its
 *   messages with, is dropped (it is no JSON Schema keyword);
 * - `tests` items, which the loader judges by their `type` once it has read it,
 *   become one `if`/`then` per test type holding that type's schema, so an
 *   editor completes and checks the keys of the type written;
 * - rules the loader checks in code and JSON Schema can state are added
 *   (STATED_RULES), each from the constants the loader checks with;
 * - the rest stays loader-only (LOADER_ONLY_RULES, in the file's `$comment`).
 */
import type { TSchema } from 'typebox';
import { ENV_REFERENCE } from '../secrets/index.js';
import { FRAMEWORK_ADAPTERS } from '../executors/frameworks/registry.js';
import type { FrameworkName } from '../core/types.js';
import { ENVIRONMENT_NAME, HTTP_METHODS, SuiteSchema } from './suite-schema.js';
import { TEST_TYPE_NAMES, isTestType, testSchema } from './suite-test-types.js';
import { REFUSED_VARIABLES } from './dangerous-variables.js';

/** A JSON Schema object as plain JSON data. */
export type JsonSchema = { [keyword: string]: unknown };

export const CONFIG_SCHEMA_DRAFT = 'http://json-schema.org/draft-07/schema#';
export const CONFIG_SCHEMA_ID = 'urn:runset:schema:runset.config';

/** What the loader refuses that no JSON Schema can say; an editor accepts these and `runset serve` names them. */
export const LOADER_ONLY_RULES: readonly string[] = Object.freeze([
  'tests[].name is unique in the file, and webhooks[].name among the webhooks (uniqueness of a key across items)',
  'the environments named by tests[].environments, webhooks[].environments, github.environments and gitlab.environments are declared (a reference to another part of the file)',
  'every {{NAME}} placeholder of a test is declared in every environment the test runs in (a reference to another part of the file)',
  'the folders and files a test names exist: command cwd, playwright dir and its playwright.config.*, a framework dir, newman collection (the file system)',
  'paths stay inside their folder: an uploaded suite\'s paths, command junit and artifacts (no absolute path, no "..")',
  'URLs: an http test\'s request.url is an absolute http(s) URL unless it starts with a placeholder; webhooks[].url, github.apiUrl and gitlab.apiUrl parse and are not link-local or metadata addresses',
  'regular expressions compile: playwright grep, a variable\'s pattern',
  'setTimeout is a duration from 1s to 7d in whole seconds, such as 60m',
  'a variable value holding "${env:" is exactly "${env:NAME}"',
  'command run[0] (the program) is not empty',
  'a webhook with when: failure or change does not list set.started in events',
  'YAML itself: one document, no duplicate keys, aliases that resolve (the editor\'s YAML parser reports these)',
]);

/** The loader's schemas as plain JSON, without runset's own annotation keyword. */
function plain(schema: TSchema | JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => (key === 'keyDescription' ? undefined : value)) as JsonSchema;
}

/** The node at `keys` under `node`; a schema that changed shape fails the build here rather than losing a rule quietly. */
function at(node: JsonSchema, ...keys: string[]): JsonSchema {
  let current: unknown = node;
  for (const key of keys) {
    current = (current as JsonSchema | undefined)?.[key];
    if (current === null || typeof current !== 'object') throw new Error(`the config schema has no ${keys.join('.')}: update config-json-schema.ts`);
  }
  return current as JsonSchema;
}

/** The branch of a union (`anyOf`) whose type is `type`. */
function branch(union: JsonSchema, type: string): JsonSchema {
  const found = (union.anyOf as JsonSchema[] | undefined)?.find((member) => member.type === type);
  if (!found) throw new Error(`the config schema has no ${type} branch where one is expected: update config-json-schema.ts`);
  return found;
}

/** A pattern matching `pattern`'s letters in either case: JSON Schema patterns take no flags. */
function anyCase(pattern: string): string {
  return pattern.replace(/[A-Za-z]/g, (letter) => `[${letter.toUpperCase()}${letter.toLowerCase()}]`);
}

/** Each test type's schema, applied when `type` names it: what an editor completes after `type: http`. */
function testItems(): JsonSchema {
  return {
    type: 'object',
    description: 'a test: a mapping with name, type and the keys of that type',
    required: ['type'],
    properties: { type: { enum: [...TEST_TYPE_NAMES], description: `the kind of test: one of ${TEST_TYPE_NAMES.join(', ')}` } },
    allOf: TEST_TYPE_NAMES.filter(isTestType).map((type) => ({ if: { properties: { type: { const: type } }, required: ['type'] }, then: plain(testSchema(type)) })),
  };
}

/** The `then` schema of one test type in the built schema. */
function testOfType(root: JsonSchema, type: string): JsonSchema {
  const cases = at(root, 'properties', 'tests', 'items').allOf as JsonSchema[];
  const found = cases.find((item) => at(item, 'if', 'properties', 'type').const === type);
  if (!found) throw new Error(`the config schema has no test type ${type}`);
  return at(found, 'then');
}

const webhookItem = (root: JsonSchema): JsonSchema => at(branch(at(root, 'properties', 'webhooks'), 'array'), 'items');

/**
 * Rules the loader checks in code, stated in JSON Schema from the same
 * constants. Each is held to the loader by test/unit/config-schema.test.ts:
 * the loader and the schema refuse the same file at the same path.
 */
const STATED_RULES: ReadonlyArray<{ rule: string; apply(root: JsonSchema): void }> = [
  {
    rule: 'variables named as a loader, runtime or shell reads them (NODE_OPTIONS, LD_*, …) are refused (dangerous-variables.ts)',
    apply(root) {
      const environment = branch(at(root, 'properties', 'environments', 'patternProperties', ENVIRONMENT_NAME.source), 'object');
      const variables = branch(at(environment, 'properties', 'variables'), 'object');
      const names = `^(?:${REFUSED_VARIABLES.names.join('|')})$|^(?:${REFUSED_VARIABLES.prefixes.join('|')})`;
      variables.propertyNames = { not: { pattern: anyCase(names) }, description: `a name no loader, runtime or shell reads: never ${REFUSED_VARIABLES.names.join(', ')}, ${REFUSED_VARIABLES.prefixes.map((p) => `${p}*`).join(', ')}` };
    },
  },
  {
    rule: 'secrets are references "${env:NAME}", never written in the file (suite-code-hosts.ts envSecret)',
    apply(root) {
      const secrets = [at(webhookItem(root), 'properties', 'secret'), at(root, 'properties', 'github', 'properties', 'token'), at(root, 'properties', 'github', 'properties', 'app', 'properties', 'privateKey'), at(root, 'properties', 'gitlab', 'properties', 'token')];
      for (const secret of secrets) secret.pattern = ENV_REFERENCE.source;
    },
  },
  {
    rule: 'a webhook has a secret unless its format is slack (suite-webhooks.ts secretOf)',
    apply(root) {
      Object.assign(webhookItem(root), { if: { properties: { format: { const: 'slack' } }, required: ['format'] }, else: { required: ['secret'] } });
    },
  },
  {
    rule: 'github has exactly one of token and app (suite-code-hosts.ts buildGitHub)',
    apply(root) {
      at(root, 'properties', 'github').oneOf = [{ required: ['token'] }, { required: ['app'] }];
    },
  },
  {
    rule: 'an http method is one of HTTP_METHODS in any case, and GET and HEAD send no body (suite-test-types.ts http.build)',
    apply(root) {
      const request = at(testOfType(root, 'http'), 'properties', 'request');
      Object.assign(at(request, 'properties', 'method'), { pattern: anyCase(`^(?:${HTTP_METHODS.join('|')})$`), examples: [...HTTP_METHODS] });
      request.if = { anyOf: [{ not: { required: ['method'] } }, { properties: { method: { type: 'string', pattern: anyCase('^(?:GET|HEAD)$') } }, required: ['method'] }] };
      request.then = { properties: { body: false } };
    },
  },
  {
    rule: 'a framework whose command line takes no retries has no retries key (suite-frameworks.ts, the adapter\'s retriesFlag)',
    apply(root) {
      for (const type of Object.keys(FRAMEWORK_ADAPTERS) as FrameworkName[]) {
        if (!FRAMEWORK_ADAPTERS[type].retriesFlag) delete at(testOfType(root, type), 'properties').retries;
      }
    },
  },
];

/** The whole JSON Schema of runset.config.yaml, as written to schema/runset.config.schema.json. */
export function configJsonSchema(): JsonSchema {
  const { description: shape, ...root } = plain(SuiteSchema);
  at(root, 'properties', 'tests').items = testItems();
  for (const rule of STATED_RULES) rule.apply(root);
  return {
    $schema: CONFIG_SCHEMA_DRAFT,
    $id: CONFIG_SCHEMA_ID,
    title: 'runset.config.yaml',
    description: `runset's configuration: the environments a set runs in and the tests it runs; ${String(shape)}. Generated from runset's loader (npm run build:schema): do not edit.`,
    $comment: `Rules checked by the loader only (runset serve names them; this schema cannot): ${LOADER_ONLY_RULES.map((rule, index) => `(${index + 1}) ${rule}`).join('; ')}. Rules of the loader stated here too: ${STATED_RULES.map(({ rule }) => rule).join('; ')}.`,
    ...root,
  };
}
