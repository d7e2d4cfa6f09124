/**
 * The shape of runset.config.yaml as TypeBox schemas. Every schema carries a
 * `description` written as the end of "expected …" in error messages, so the
 * schema is also the wording of the errors (see suite-explain.ts).
 *
 * Only the structure lives here; per-test-type keys are in suite-test-types.ts.
 */
import type { TProperties } from 'typebox';
import { Type } from '../core/typebox.js';
import { LIMITS } from '../core/wire.js';
import { VARIABLE_NAME } from '../executors/template.js';
import { WebhooksSchema } from './suite-webhooks.js';
import { CONFIG_DEFAULTS } from './config-defaults.js';
import { GitHubSchema, GitLabSchema } from './suite-code-hosts.js';

/**
 * The length limit is in the pattern: a record's keys are judged by their
 * pattern alone (a maxLength beside it is not applied), and the API refuses a
 * longer name, so an environment declared with one could never be run.
 */
export const ENVIRONMENT_NAME = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,${LIMITS.envNameLength - 1}}$`);

const VARIABLE_NAME_TEXT = 'a variable name such as BASE_URL (letters, digits and _, not starting with a digit)';
const ENVIRONMENT_TEXT = 'a mapping with "variables", "maxFailures", "failOnFlaky", "maxConcurrentSets", "setTimeout", "allowPrivateTargets" and "allowSuiteUploads"';
const VARIABLES_TEXT = 'a mapping of variable names to string values, such as {BASE_URL: "https://staging.example.com"}';

const VALUE_TEXT = 'a string value, or "${env:NAME}" to read it from the server\'s environment';

/** `BASE_URL: { value: …, allow: [globs], pattern: regex }`: a variable whose overrides are constrained. */
export const ConstrainedVariableSchema = Type.Object(
  {
    value: Type.String({ description: VALUE_TEXT }),
    allow: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 1000, description: 'a glob such as "https://*.preview.example.com"' }), {
        maxItems: 100,
        description: 'a list of globs that an override must match, such as ["https://*.preview.example.com"]',
      }),
    ),
    pattern: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'a regular expression that an override must match as a whole' })),
  },
  { additionalProperties: false, description: 'a mapping with "value" and the override values it accepts ("allow" globs and/or a "pattern")' },
);

// `__proto__` would be a valid name but not a safe key of a plain object.
export const VariablesSchema = Type.Record(
  Type.String({ pattern: `^(?!__proto__$)${VARIABLE_NAME.source.slice(1)}` }),
  Type.Union([Type.String({ description: VALUE_TEXT }), ConstrainedVariableSchema], {
    description: `${VALUE_TEXT}; or {value, allow, pattern} to constrain its overrides`,
  }),
  {
    additionalProperties: false,
    keyDescription: VARIABLE_NAME_TEXT,
    description: VARIABLES_TEXT,
  },
);

export const EnvironmentSchema = Type.Union(
  [
    Type.Null(), // `preview:` with nothing under it: an environment without variables
    Type.Object(
      {
        variables: Type.Optional(Type.Union([Type.Null(), VariablesSchema], { description: VARIABLES_TEXT })),
        maxFailures: Type.Optional(
          Type.Integer({ minimum: 1, maximum: 100_000, description: 'a whole number of failures from 1, after which the rest of a set is cancelled' }),
        ),
        failOnFlaky: Type.Optional(Type.Boolean({ default: CONFIG_DEFAULTS.environment.failOnFlaky, description: 'true or false: whether a test that passed only after a retry fails its set' })),
        maxConcurrentSets: Type.Optional(
          Type.Integer({ minimum: 1, maximum: 1000, description: 'a whole number of sets from 1 to 1000 that may run at once; later sets wait their turn in order' }),
        ),
        setTimeout: Type.Optional(
          Type.String({ minLength: 1, default: CONFIG_DEFAULTS.environment.setTimeout, description: 'a duration from 1s to 7d such as 60m or 2h: how long a set may take from its creation, queue time included, before it is cancelled' }),
        ),
        allowPrivateTargets: Type.Optional(
          Type.Boolean({ default: CONFIG_DEFAULTS.environment.allowPrivateTargets, description: 'true or false: whether http tests may reach private addresses (10/8, 172.16/12, 192.168/16, fc00::/7)' }),
        ),
        allowSuiteUploads: Type.Optional(
          Type.Boolean({ default: CONFIG_DEFAULTS.environment.allowSuiteUploads, description: 'true or false: whether a set may run an uploaded suite version (`runset trigger --suite`) rather than this config\'s tests' }),
        ),
      },
      { additionalProperties: false, description: ENVIRONMENT_TEXT },
    ),
  ],
  { description: ENVIRONMENT_TEXT },
);

export const SuiteSchema = Type.Object(
  {
    environments: Type.Record(Type.String({ pattern: ENVIRONMENT_NAME.source }), EnvironmentSchema, {
      additionalProperties: false,
      minProperties: 1,
      keyDescription: `an environment name such as staging (letters, digits, "_", "." and "-", at most ${LIMITS.envNameLength} characters)`,
      description: 'a mapping of at least one environment, such as {staging: {variables: {BASE_URL: "https://…"}}}',
    }),
    tests: Type.Array(Type.Unknown(), { description: 'a list of tests, each a mapping with name and type' }),
    webhooks: Type.Optional(WebhooksSchema),
    github: Type.Optional(GitHubSchema),
    gitlab: Type.Optional(GitLabSchema),
  },
  {
    additionalProperties: false,
    // `x-…` keys are ignored, as in docker-compose: a place for YAML anchors (`x-defaults: &defaults`).
    patternProperties: { '^x-': Type.Unknown() },
    keyDescription: 'or an x-… key for your own anchors',
    description: 'a mapping with "environments" and "tests" (and optionally "webhooks", "github" and "gitlab")',
  },
);

export const HTTP_METHODS: readonly string[] = Object.freeze(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * A test's `timeoutSeconds` and `retries`; `withDefaults` for the types whose
 * unset ones are runset's (http, command), not the suite's own.
 */
export function timingProperties(withDefaults: boolean) {
  const defaults = (key: keyof typeof CONFIG_DEFAULTS.test) => (withDefaults ? { default: CONFIG_DEFAULTS.test[key] } : {});
  return {
    timeoutSeconds: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 86_400,
        ...defaults('timeoutSeconds'),
        description: 'a positive number of seconds, at most 86400 (one day), such as 300',
      }),
    ),
    retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, ...defaults('retries'), description: 'a whole number of extra tries from 0 to 10' })),
  } satisfies TProperties;
}

/** Keys every test accepts, whatever its type (`type` itself is added per type). */
export const CommonTestProperties = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'a test name, unique in the file' }),
  tags: Type.Optional(
    Type.Array(Type.String({ minLength: 1, description: 'a tag string such as smoke' }), {
      description: 'a list of tags such as [smoke]',
    }),
  ),
  environments: Type.Optional(
    Type.Array(Type.String({ minLength: 1, description: 'an environment name' }), {
      minItems: 1,
      description: 'a list of environment names such as [staging] (leave the key out to run in every environment)',
    }),
  ),
  ...timingProperties(false),
} satisfies TProperties;
