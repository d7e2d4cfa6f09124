/**
 * `github:` and `gitlab:` in runset.config.yaml: where runset reports a set on
 * its commit (src/webhooks/code-hosts/). The structure is checked by the schema; this
 * module adds what a schema cannot say (secrets only by reference, the
 * repository's shape, environments declared, an API address runset may reach).
 */
import type { Static } from 'typebox';
import { Type } from '../core/typebox.js';
import { checkHost } from '../net/outbound.js';
import { WEBHOOK_OUTBOUND_POLICY } from '../core/webhooks.js';
import type { CodeHostsConfig, EnvSecret, GitHubConfig, GitLabConfig } from '../core/code-hosts.js';
import { describeValue, fail, type DocPath } from './suite-error.js';
import { ENV_REFERENCE } from '../secrets/index.js';
import { CONFIG_DEFAULTS } from './config-defaults.js';

const SECRET_TEXT = 'a reference "${env:NAME}" to a secret in the server\'s environment';
const ENVIRONMENTS = Type.Array(Type.String({ minLength: 1, description: 'an environment name' }), { minItems: 1, description: 'a list of environment names such as [staging]' });

export const GitHubSchema = Type.Object(
  {
    repository: Type.String({ pattern: '^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$', description: 'the repository as owner/name, such as acme/shop' }),
    token: Type.Optional(Type.String({ description: SECRET_TEXT })),
    app: Type.Optional(
      Type.Object(
        {
          id: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[0-9]+$' })], { description: "the GitHub App's numeric id" }),
          privateKey: Type.String({ description: `${SECRET_TEXT} holding the App's private key (PEM)` }),
          installationId: Type.Optional(Type.Integer({ minimum: 1, description: "the App's installation on the repository (default: looked up)" })),
        },
        { additionalProperties: false, description: 'a GitHub App: a mapping with id, privateKey and optionally installationId' },
      ),
    ),
    environments: Type.Optional(ENVIRONMENTS),
    apiUrl: Type.Optional(Type.String({ minLength: 1, default: CONFIG_DEFAULTS.github.apiUrl, description: 'the REST API address, such as https://github.example.com/api/v3' })),
    checkName: Type.Optional(Type.String({ minLength: 1, maxLength: 100, default: CONFIG_DEFAULTS.github.checkName, description: 'the check run\'s name; {env} is the environment' })),
    pathPrefix: Type.Optional(
      Type.String({ default: CONFIG_DEFAULTS.github.pathPrefix, description: "the folder, in the repository, of Playwright's testDir, such as e2e/tests/ (empty: the repository's root)" }),
    ),
  },
  { additionalProperties: false, description: 'a mapping with repository, token (or app), and optionally environments, apiUrl, checkName and pathPrefix' },
);

export const GitLabSchema = Type.Object(
  {
    project: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1 })], { description: 'the project id, such as 42, or its path, such as group/shop' }),
    token: Type.String({ description: SECRET_TEXT }),
    environments: Type.Optional(ENVIRONMENTS),
    apiUrl: Type.Optional(Type.String({ minLength: 1, default: CONFIG_DEFAULTS.gitlab.apiUrl, description: 'the REST API address, such as https://gitlab.example.com/api/v4' })),
    statusName: Type.Optional(Type.String({ minLength: 1, maxLength: 255, default: CONFIG_DEFAULTS.gitlab.statusName, description: 'the status\'s name; {env} is the environment' })),
  },
  { additionalProperties: false, description: 'a mapping with project and token, and optionally environments, apiUrl and statusName' },
);

/** The code hosts of a file whose structure the schema has checked. */
export function buildCodeHosts(
  raw: { github?: Static<typeof GitHubSchema> | undefined; gitlab?: Static<typeof GitLabSchema> | undefined },
  declared: ReadonlySet<string>,
): CodeHostsConfig {
  return { github: raw.github ? buildGitHub(raw.github, declared) : null, gitlab: raw.gitlab ? buildGitLab(raw.gitlab, declared) : null };
}

function buildGitHub(raw: Static<typeof GitHubSchema>, declared: ReadonlySet<string>): GitHubConfig {
  const [owner, repo] = raw.repository.split('/') as [string, string];
  if ((raw.token === undefined) === (raw.app === undefined)) {
    fail(['github'], raw.token === undefined ? 'neither token nor app is given' : 'both token and app are given', 'exactly one of token: "${env:NAME}" or app: {id, privateKey: "${env:NAME}"}');
  }
  const auth: GitHubConfig['auth'] = raw.app
    ? { kind: 'app', appId: String(raw.app.id), privateKey: envSecret(raw.app.privateKey, ['github', 'app', 'privateKey']), installationId: raw.app.installationId ?? null }
    : { kind: 'token', token: envSecret(raw.token as string, ['github', 'token']) };
  return {
    owner,
    repo,
    auth,
    environments: environmentsOf(raw.environments, declared, ['github', 'environments']),
    apiUrl: apiUrlOf(raw.apiUrl ?? CONFIG_DEFAULTS.github.apiUrl, ['github', 'apiUrl']),
    checkName: raw.checkName ?? CONFIG_DEFAULTS.github.checkName,
    pathPrefix: prefixOf(raw.pathPrefix ?? CONFIG_DEFAULTS.github.pathPrefix),
  };
}

function buildGitLab(raw: Static<typeof GitLabSchema>, declared: ReadonlySet<string>): GitLabConfig {
  return {
    project: String(raw.project),
    token: envSecret(raw.token, ['gitlab', 'token']),
    environments: environmentsOf(raw.environments, declared, ['gitlab', 'environments']),
    apiUrl: apiUrlOf(raw.apiUrl ?? CONFIG_DEFAULTS.gitlab.apiUrl, ['gitlab', 'apiUrl']),
    statusName: raw.statusName ?? CONFIG_DEFAULTS.gitlab.statusName,
  };
}

/** A secret's reference: exactly `${env:NAME}`, never the secret itself. */
export function envSecret(text: string, at: DocPath): EnvSecret {
  const ref = ENV_REFERENCE.exec(text);
  if (!ref) {
    fail(at, `${text.includes('${env:') ? describeValue(text) : 'a secret written in clear'} is not a reference`, 'exactly "${env:NAME}", read from the server\'s environment (a secret is never written in the file)');
  }
  return { kind: 'env', name: ref[1] as string };
}

function environmentsOf(list: readonly string[] | undefined, declared: ReadonlySet<string>, at: DocPath): readonly string[] | null {
  list?.forEach((env, i) => {
    if (!declared.has(env)) fail([...at, i], `unknown environment ${JSON.stringify(env)}`, `one of the declared environments: ${[...declared].join(', ')}`);
  });
  return list ?? null;
}

function apiUrlOf(text: string, at: DocPath): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    fail(at, `${describeValue(text)} is not a URL`, 'an http(s) URL such as https://github.example.com/api/v3');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(at, `the scheme ${url.protocol} is not supported`, 'an http: or https: URL');
  // As for webhooks: a literal metadata or link-local address is refused here; a name is checked again after DNS at each request.
  const refused = checkHost(url.hostname, WEBHOOK_OUTBOUND_POLICY);
  if (refused) fail(at, refused.message, 'an API address runset may reach (never link-local or cloud metadata addresses)');
  return text.replace(/\/+$/, '');
}

/** `e2e/tests` and `/e2e/tests/` both become `e2e/tests/`; '' stays ''. */
function prefixOf(text: string): string {
  const trimmed = text.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? '' : `${trimmed}/`;
}
