/**
 * Calling GitHub's REST API: its headers, a call whose error answer becomes a
 * HostCallError, and the credentials — a token, or a GitHub App.
 *
 * Signing in as a GitHub App: a JWT signed with the App's private key
 * (RS256, node:crypto) is exchanged for an installation token, which is what
 * the checks API takes. Tokens live an hour; one is kept per installation and
 * renewed five minutes before it expires. Neither the key nor a token is ever
 * logged or stored.
 */
import { createPrivateKey, sign } from 'node:crypto';
import type { GitHubConfig } from '../../core/code-hosts.js';
import { answerError, HostCallError, secretValue, type HostAnswer, type HostRequest } from './http.js';

type AppAuth = Extract<GitHubConfig['auth'], { kind: 'app' }>;

const USER_AGENT = 'runset-checks/1';

/** GitHub's recommended headers, with the credential as a bearer token. */
export function gitHubHeaders(bearer: string): Record<string, string> {
  return { accept: 'application/vnd.github+json', authorization: `Bearer ${bearer}`, 'x-github-api-version': '2022-11-28', 'user-agent': USER_AGENT };
}

/** One call; a non-2xx answer throws, named by `what` (never the token, never the query). */
export async function callGitHub(
  request: HostRequest,
  call: { apiUrl: string; bearer: string; method: string; path: string; body?: unknown; what: string; signal: AbortSignal },
): Promise<HostAnswer> {
  const headers = gitHubHeaders(call.bearer);
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  const answer = await request(`${call.apiUrl}${call.path}`, {
    method: call.method,
    headers,
    signal: call.signal,
    ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
  });
  if (answer.status < 200 || answer.status > 299) throw answerError(call.what, answer);
  return answer;
}

/** The bearer token for `config`: its token, or its App's installation token. */
export function gitHubToken(config: GitHubConfig, tokens: GitHubAppTokens, request: HostRequest, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<string> {
  if (config.auth.kind === 'token') return Promise.resolve(secretValue(config.auth.token, env, 'GitHub token'));
  return tokens.token(config, config.auth, request, env, signal);
}

const RENEW_BEFORE_MS = 5 * 60_000;

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** The App's JWT: issued a minute in the past (GitHub's advice for clock drift), valid nine minutes (GitHub allows ten). */
export function appJwt(appId: string, privateKeyPem: string, nowMs = Date.now()): string {
  const now = Math.floor(nowMs / 1000);
  const unsigned = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${base64url(JSON.stringify({ iat: now - 60, exp: now + 540, iss: appId }))}`;
  let key;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch {
    throw new HostCallError("the GitHub App's private key is not a PEM private key", null, { kind: 'never' });
  }
  return `${unsigned}.${base64url(sign('sha256', Buffer.from(unsigned), key))}`;
}

export class GitHubAppTokens {
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();

  /** An installation token for `config`'s repository, from the cache or freshly exchanged. */
  async token(config: GitHubConfig, auth: AppAuth, request: HostRequest, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<string> {
    const key = `${config.apiUrl} ${auth.appId} ${auth.installationId ?? `${config.owner}/${config.repo}`}`;
    const kept = this.tokens.get(key);
    if (kept && kept.expiresAt - RENEW_BEFORE_MS > Date.now()) return kept.token;
    const jwt = appJwt(auth.appId, secretValue(auth.privateKey, env, "GitHub App's privateKey"));
    const call = async (method: string, path: string, what: string) =>
      (await callGitHub(request, { apiUrl: config.apiUrl, bearer: jwt, method, path, what, signal })).json as Record<string, unknown>;
    const installationId = auth.installationId ?? Number((await call('GET', `/repos/${config.owner}/${config.repo}/installation`, 'finding the GitHub App installation')).id);
    const made = await call('POST', `/app/installations/${installationId}/access_tokens`, 'making a GitHub App installation token');
    if (typeof made.token !== 'string') throw new HostCallError('GitHub answered the installation token request without a token', null, { kind: 'backoff', afterMs: 0 });
    const expiresAt = typeof made.expires_at === 'string' ? Date.parse(made.expires_at) : Date.now() + 60 * 60_000;
    this.tokens.set(key, { token: made.token, expiresAt });
    return made.token;
  }
}
