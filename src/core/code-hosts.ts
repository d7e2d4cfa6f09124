/**
 * Code hosts: what `github:` and `gitlab:` in runset.config.yaml declare. A set
 * that carries a `commit` label is reported on that commit — a GitHub check run
 * or a GitLab commit status — through the webhook outbox: each code host is one
 * more delivery target, named so that no webhook can take its name (a webhook's
 * name has no ":").
 */
import type { SetEvent } from './webhooks.js';

export const GITHUB_TARGET = 'github:check-run';
export const GITLAB_TARGET = 'gitlab:commit-status';
export type CodeHostTarget = typeof GITHUB_TARGET | typeof GITLAB_TARGET;

export function isCodeHostTarget(name: string): name is CodeHostTarget {
  return name === GITHUB_TARGET || name === GITLAB_TARGET;
}

/** A secret in the server's environment: `${env:NAME}`, never written in the file. */
export interface EnvSecret {
  kind: 'env';
  name: string;
}

export interface GitHubConfig {
  /** `owner/name`. */
  owner: string;
  repo: string;
  /** A token (personal, fine-grained or an Action's), or a GitHub App that runset signs in as. */
  auth: { kind: 'token'; token: EnvSecret } | { kind: 'app'; appId: string; privateKey: EnvSecret; installationId: number | null };
  /** Only sets of these environments; null: every environment. */
  environments: readonly string[] | null;
  /** The REST API's base URL without a trailing slash: https://api.github.com, or GitHub Enterprise's https://HOST/api/v3. */
  apiUrl: string;
  /** The check run's name; `{env}` is replaced by the set's environment. */
  checkName: string;
  /** Put before a Playwright case's file (relative to Playwright's testDir) to make its path in the repository. */
  pathPrefix: string;
}

export interface GitLabConfig {
  /** A numeric project id, or its path (`group/project`). */
  project: string;
  token: EnvSecret;
  environments: readonly string[] | null;
  /** The REST API's base URL without a trailing slash: https://gitlab.com/api/v4. */
  apiUrl: string;
  /** The status's name (its context); `{env}` is replaced by the set's environment. */
  statusName: string;
}

export interface CodeHostsConfig {
  github: GitHubConfig | null;
  gitlab: GitLabConfig | null;
}

export const NO_CODE_HOSTS: CodeHostsConfig = Object.freeze({ github: null, gitlab: null });

/** The code-host targets a set event goes to: only a set with a commit, of an environment the block takes. The one place this rule lives. */
export function codeHostTargets(hosts: CodeHostsConfig, event: SetEvent): CodeHostTarget[] {
  if (!event.commit) return [];
  const takes = (environments: readonly string[] | null) => environments === null || environments.includes(event.env);
  const out: CodeHostTarget[] = [];
  if (hosts.github && takes(hosts.github.environments)) out.push(GITHUB_TARGET);
  if (hosts.gitlab && takes(hosts.gitlab.environments)) out.push(GITLAB_TARGET);
  return out;
}

/** `{env}` in a configured name, replaced. */
export function nameFor(template: string, env: string): string {
  return template.replaceAll('{env}', env);
}
