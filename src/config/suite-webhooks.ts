/**
 * `webhooks:` in runset.config.yaml: where runset posts a set's start and end.
 * The structure is checked by the schema; this module adds what a schema
 * cannot say (secrets only by reference, names unique, environments declared).
 */
import type { Static } from 'typebox';
import { Type } from '../core/typebox.js';
import type { VariableValue } from '../core/types.js';
import { checkHost } from '../net/outbound.js';
import { SET_EVENTS, WEBHOOK_FORMATS, WEBHOOK_OUTBOUND_POLICY, WEBHOOK_WHEN, type SetEventName, type WebhookConfig } from '../core/webhooks.js';
import { describeValue, fail, type DocPath } from './suite-error.js';
import { ENV_REFERENCE } from '../secrets/index.js';
import { envSecret } from './suite-code-hosts.js';
import { CONFIG_DEFAULTS } from './config-defaults.js';

const quoted = (list: readonly string[]) => list.map((item) => JSON.stringify(item)).join(', ');

export const WebhookSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$', description: 'a name such as team-alerts (letters, digits, "_", "." and "-", at most 64)' })),
    url: Type.String({ minLength: 1, description: 'an http(s) URL such as https://hooks.example.com/runset, or "${env:NAME}"' }),
    secret: Type.Optional(Type.String({ description: 'a reference "${env:NAME}" to the signing secret in the server\'s environment' })),
    events: Type.Optional(
      Type.Array(Type.Union(SET_EVENTS.map((event) => Type.Literal(event)), { description: `one of ${quoted(SET_EVENTS)}` }), {
        minItems: 1,
        default: CONFIG_DEFAULTS.webhook.events,
        description: `a list of events such as [set.finished] (${quoted(SET_EVENTS)})`,
      }),
    ),
    environments: Type.Optional(
      Type.Array(Type.String({ minLength: 1, description: 'an environment name' }), { minItems: 1, description: 'a list of environment names such as [production]' }),
    ),
    format: Type.Optional(Type.Union(WEBHOOK_FORMATS.map((format) => Type.Literal(format)), { default: CONFIG_DEFAULTS.webhook.format, description: `one of ${quoted(WEBHOOK_FORMATS)}` })),
    when: Type.Optional(
      Type.Union(WEBHOOK_WHEN.map((when) => Type.Literal(when)), { default: CONFIG_DEFAULTS.webhook.when, description: `one of ${quoted(WEBHOOK_WHEN)} (failure: only sets that FAIL; change: only a result that differs from the environment's previous set's)` }),
    ),
  },
  { additionalProperties: false, description: 'a webhook: a mapping with url, secret, events, environments, format and when' },
);

const WEBHOOKS_TEXT = 'a list of webhooks, each a mapping with url and secret';
export const WebhooksSchema = Type.Union([Type.Null(), Type.Array(WebhookSchema, { description: WEBHOOKS_TEXT })], { description: WEBHOOKS_TEXT });

/** The webhooks of a file whose structure the schema has checked. */
export function buildWebhooks(raw: Static<typeof WebhooksSchema> | null | undefined, declared: ReadonlySet<string>): WebhookConfig[] {
  const names = new Set<string>();
  return (raw ?? []).map((hook, index) => {
    const at = ['webhooks', index] as const;
    const name = hook.name ?? `webhook-${index + 1}`;
    if (names.has(name)) fail([...at, 'name'], `duplicate webhook name ${JSON.stringify(name)}`, 'a name unique among the webhooks');
    names.add(name);
    const format = hook.format ?? CONFIG_DEFAULTS.webhook.format;
    const secret = secretOf(hook.secret, format, [...at, 'secret']);
    hook.environments?.forEach((env, i) => {
      if (!declared.has(env)) fail([...at, 'environments', i], `unknown environment ${JSON.stringify(env)}`, `one of the declared environments: ${[...declared].join(', ')}`);
    });
    const events = [...new Set((hook.events ?? CONFIG_DEFAULTS.webhook.events) as SetEventName[])];
    const when = hook.when ?? CONFIG_DEFAULTS.webhook.when;
    if (when !== 'always' && events.includes('set.started')) {
      fail([...at, 'when'], `when: ${when} sends only set ends, but events lists set.started`, 'events: [set.finished] with when: failure or change, or when: always to be told of starts too');
    }
    return { name, url: urlOf(hook.url, [...at, 'url']), secret, events, environments: hook.environments ?? null, format, when };
  });
}

function secretOf(text: string | undefined, format: string, at: DocPath): WebhookConfig['secret'] {
  if (text === undefined) {
    if (format === 'slack') return null; // Slack's incoming webhooks do not check signatures: the URL is the secret
    fail(at, 'missing', 'a reference "${env:NAME}" to the signing secret (receivers check the Runset-Signature header with it)');
  }
  return envSecret(text, at);
}

function urlOf(text: string, at: DocPath): VariableValue {
  const ref = ENV_REFERENCE.exec(text);
  if (ref) return { kind: 'env', name: ref[1] as string };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    fail(at, `${describeValue(text)} is not a URL`, 'an http(s) URL such as https://hooks.example.com/runset, or "${env:NAME}"');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(at, `the scheme ${url.protocol} is not supported`, 'an http: or https: URL');
  // A literal address or metadata name is refused here; a name is checked again after DNS at each delivery.
  const refused = checkHost(url.hostname, WEBHOOK_OUTBOUND_POLICY);
  if (refused) fail(at, refused.message, 'a receiver runset may reach (never link-local or cloud metadata addresses)');
  return { kind: 'plain', value: text };
}
