/**
 * The table of test types: for each `type:` value, the keys it accepts beyond
 * the common ones, how a validated entry becomes a TestSpec, and which of its
 * strings may hold `{{NAME}}` placeholders. Adding a kind of test (playwright)
 * is one entry here plus its member in the TestSpec union (a framework: its
 * name in FRAMEWORKS and its adapter) — the mapped type
 * below makes the compiler ask for the entry.
 */
import type { Static, TObject } from 'typebox';
import { Type } from '../core/typebox.js';
import type { CommandTestSpec, HttpTestSpec, TestSpec, TestType } from '../core/types.js';
import { fail, type DocPath } from './suite-error.js';
import { CommonTestProperties, HTTP_METHODS, timingProperties } from './suite-schema.js';
import { CONFIG_DEFAULTS } from './config-defaults.js';
import { playwrightTestType } from './suite-playwright.js';
import { frameworkTestType } from './suite-frameworks.js';
import { ArtifactGlobsProperty, artifactGlobs } from './artifact-globs.js';
import { checkInsideGlob, resolveTestPath, type TemplatedText, type TestTypeDefinition } from './test-type.js';

// ── http ────────────────────────────────────────────────────────────────────

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const HttpProperties = {
  request: Type.Object(
    {
      method: Type.Optional(Type.String({ default: CONFIG_DEFAULTS.http.method, description: `an HTTP method: ${HTTP_METHODS.join(', ')}` })),
      url: Type.String({ minLength: 1, description: 'a URL string such as "{{BASE_URL}}/health"' }),
      headers: Type.Optional(
        Type.Record(Type.String({ pattern: HEADER_NAME.source }), Type.String({ description: 'a header value string' }), {
          additionalProperties: false,
          keyDescription: 'a header name such as X-Request-Id',
          description: 'a mapping of header names to string values, such as {Authorization: "Bearer {{API_TOKEN}}"}',
        }),
      ),
      body: Type.Optional(
        Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())], {
          description: 'a string, or a mapping or list to send as JSON',
        }),
      ),
    },
    { additionalProperties: false, description: 'a mapping with url, and optionally method, headers and body' },
  ),
  expect: Type.Optional(
    Type.Object(
      {
        status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'an HTTP status code such as 200' })),
        bodyContains: Type.Optional(Type.String({ minLength: 1, description: 'a text the response body must contain' })),
        json: Type.Optional(Type.Unknown({ description: 'a JSON value the response must contain' })),
      },
      { additionalProperties: false, description: 'a mapping with status, bodyContains and/or json' },
    ),
  ),
};

type HttpRaw = Static<TObject<typeof HttpProperties>>;

const http: TestTypeDefinition<HttpTestSpec> = {
  properties: HttpProperties,
  build(raw, common, ctx) {
    const { request, expect } = raw as HttpRaw; // validated against HttpProperties by the caller
    const method = (request.method ?? CONFIG_DEFAULTS.http.method).toUpperCase();
    const at = [...ctx.path, 'request'];
    if (!HTTP_METHODS.includes(method)) {
      fail([...at, 'method'], `unknown HTTP method ${JSON.stringify(request.method)}`, `one of ${HTTP_METHODS.join(', ')}`);
    }
    checkUrlShape(request.url, [...at, 'url']);
    if (request.body !== undefined && (method === 'GET' || method === 'HEAD')) {
      fail([...at, 'body'], `a body cannot be sent with ${method}`, 'no body, or a method such as POST, PUT or PATCH');
    }
    const { name, ...rest } = common; // name and type first: they are what people look for in a dump
    const spec: HttpTestSpec = { name, type: 'http', request: { method, url: request.url }, expect: {}, ...rest };
    if (request.headers !== undefined) spec.request.headers = { ...request.headers };
    if (request.body !== undefined) spec.request.body = request.body;
    if (expect?.status !== undefined) spec.expect.status = expect.status;
    if (expect?.bodyContains !== undefined) spec.expect.bodyContains = expect.bodyContains;
    if (expect !== undefined && Object.hasOwn(expect, 'json')) spec.expect.json = expect.json;
    return spec;
  },
  templated(spec) {
    const texts: TemplatedText[] = [{ path: ['request', 'url'], text: spec.request.url }];
    for (const [name, value] of Object.entries(spec.request.headers ?? {})) {
      texts.push({ path: ['request', 'headers', name], text: value });
    }
    collectStrings(spec.request.body, ['request', 'body'], texts);
    return texts;
  },
};

/**
 * A URL that does not start with a placeholder is checked now: a relative
 * `/health` or a `htps://` typo would otherwise only fail at run time.
 */
function checkUrlShape(url: string, at: DocPath): void {
  if (url.trimStart().startsWith('{{')) return;
  let protocol = '';
  try {
    protocol = new URL(url.replace(/\{\{[^{}]*\}\}/g, 'x')).protocol;
  } catch {
    fail(at, `${JSON.stringify(url)} is not an absolute URL`, 'a URL string such as "{{BASE_URL}}/health"');
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    fail(at, `unsupported scheme ${JSON.stringify(protocol)}`, 'an http:// or https:// URL, such as "{{BASE_URL}}/health"');
  }
}

function collectStrings(value: unknown, at: DocPath, out: TemplatedText[]): void {
  if (typeof value === 'string') out.push({ path: at, text: value });
  else if (Array.isArray(value)) value.forEach((item, index) => collectStrings(item, [...at, index], out));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) collectStrings(item, [...at, key], out);
  }
}

// ── command ─────────────────────────────────────────────────────────────────

const CommandProperties = {
  run: Type.Array(Type.String({ description: 'an argument string' }), {
    minItems: 1,
    description: 'an argv list such as [npm, run, contract]',
  }),
  cwd: Type.Optional(Type.String({ minLength: 1, default: CONFIG_DEFAULTS.command.cwd, description: "a folder, relative to the config file's folder" })),
  junit: Type.Optional(Type.String({ minLength: 1, description: 'a JUnit XML file or glob the command writes, relative to its cwd, such as "reports/*.xml"' })),
  artifacts: ArtifactGlobsProperty,
};

type CommandRaw = Static<TObject<typeof CommandProperties>>;

const command: TestTypeDefinition<CommandTestSpec> = {
  properties: CommandProperties,
  precheck(raw, ctx) {
    if (typeof raw.run !== 'string') return;
    // runset never runs a shell: values must not be interpolated into one (docs/interface.md).
    const words = raw.run.trim().split(/\s+/);
    const shelly = /[|&;<>()$`\\"'*?~]/.test(raw.run);
    fail(
      [...ctx.path, 'run'],
      'a shell command string is not accepted (runset never runs a shell)',
      shelly
        ? 'an argv list such as [sh, -c, "…"] if you need shell features (variables arrive as environment variables)'
        : `an argv list such as [${words.join(', ')}]`,
    );
  },
  build(raw, common, ctx) {
    const { run, cwd, junit, artifacts } = raw as CommandRaw; // validated against CommandProperties by the caller
    if (run[0] === '') fail([...ctx.path, 'run', 0], 'empty program name', 'a program such as npm or ./scripts/check.sh');
    const { name, ...rest } = common;
    const folder = resolveTestPath(ctx, [...ctx.path, 'cwd'], cwd ?? CONFIG_DEFAULTS.command.cwd);
    if (junit !== undefined) checkInsideGlob([...ctx.path, 'junit'], junit, "the command's folder (cwd)", 'reports/junit.xml');
    const globs = artifactGlobs(artifacts, [...ctx.path, 'artifacts'], "the command's folder (cwd)");
    return { name, type: 'command', run: [...run], cwd: folder, ...(junit !== undefined ? { junit } : {}), ...(globs ? { artifacts: globs } : {}), ...rest };
  },
};

// ── the table ───────────────────────────────────────────────────────────────

export const TEST_TYPES: { readonly [T in TestType]: TestTypeDefinition<Extract<TestSpec, { type: T }>> } = Object.freeze({
  http,
  command,
  playwright: playwrightTestType,
  vitest: frameworkTestType('vitest'),
  jest: frameworkTestType('jest'),
  mocha: frameworkTestType('mocha'),
  cucumber: frameworkTestType('cucumber'),
  pytest: frameworkTestType('pytest'),
  newman: frameworkTestType('newman'),
});

export const TEST_TYPE_NAMES: readonly string[] = Object.freeze(Object.keys(TEST_TYPES));

export function isTestType(value: unknown): value is TestType {
  return typeof value === 'string' && Object.hasOwn(TEST_TYPES, value);
}

const testSchemas = new Map<TestType, TObject>();

/**
 * A test's full schema: common keys + `type` + its own keys, nothing else. The
 * loader validates each entry with it, and the published JSON Schema is built
 * from it (./config-json-schema.ts), so both judge a test alike.
 */
export function testSchema(type: TestType): TObject {
  let schema = testSchemas.get(type);
  if (!schema) {
    const { name, ...rest } = CommonTestProperties;
    const definition = TEST_TYPES[type];
    // Unset timeout and retries are runset's defaults, unless the suite applies its own.
    const properties = { name, type: Type.Literal(type), ...definition.properties, ...rest, ...(definition.suiteOwnsTimings ? {} : timingProperties(true)) };
    schema = Type.Object(properties, { additionalProperties: false, description: `a test of type ${JSON.stringify(type)}` });
    testSchemas.set(type, schema);
  }
  return schema;
}
