/**
 * The CI context of a set, read from the CI's own variables: which commit,
 * branch and pull request, which pipeline (its URL) and who started it. `runset
 * trigger` sends these as the set's `labels` (with `--label k=v` on top), so a
 * failing set says where it came from. Pure: the environment is passed in.
 */
import { LABEL_KEY, LIMITS } from '../core/wire.js';

/** What a label may be (the server refuses anything else): at most 20, keys `[a-z0-9_.-]{1,64}`, values ≤ 256 characters. */
export const LABEL_RULES = Object.freeze({ maxLabels: LIMITS.labelCount, keyPattern: new RegExp(LABEL_KEY), maxValueLength: LIMITS.labelValueLength });

type Env = Readonly<Record<string, string | undefined>>;

interface CiReading {
  ci: string;
  commit?: string | undefined;
  /** Where the commit can be seen, when the CI says (the dashboard links the commit to it). */
  commit_url?: string | undefined;
  branch?: string | undefined;
  pr?: string | undefined;
  pipeline?: string | undefined;
  actor?: string | undefined;
  repo?: string | undefined;
}

/** A value, unless it is empty or a CI's way of saying "none" (Buildkite's BUILDKITE_PULL_REQUEST=false). */
function given(value: string | undefined): string | undefined {
  return value === undefined || value === '' || value === 'false' ? undefined : value;
}

const READERS: ReadonlyArray<(env: Env) => CiReading | undefined> = [
  (env) =>
    env.GITHUB_ACTIONS === 'true'
      ? {
          ci: 'github',
          commit: env.GITHUB_SHA,
          commit_url: env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_SHA ? `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/commit/${env.GITHUB_SHA}` : undefined,
          // On a pull_request event GITHUB_REF_NAME is "42/merge": the head branch is the one people know.
          branch: given(env.GITHUB_HEAD_REF) ?? env.GITHUB_REF_NAME,
          pr: /^refs\/pull\/(\d+)\//.exec(env.GITHUB_REF ?? '')?.[1],
          pipeline:
            env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY && env.GITHUB_RUN_ID
              ? `${env.GITHUB_SERVER_URL}/${env.GITHUB_REPOSITORY}/actions/runs/${env.GITHUB_RUN_ID}${given(env.GITHUB_RUN_ATTEMPT) && env.GITHUB_RUN_ATTEMPT !== '1' ? `/attempts/${env.GITHUB_RUN_ATTEMPT}` : ''}`
              : undefined,
          actor: env.GITHUB_ACTOR,
          repo: env.GITHUB_REPOSITORY,
        }
      : undefined,
  (env) =>
    env.GITLAB_CI === 'true'
      ? {
          ci: 'gitlab',
          commit: env.CI_COMMIT_SHA,
          commit_url: env.CI_PROJECT_URL && env.CI_COMMIT_SHA ? `${env.CI_PROJECT_URL}/-/commit/${env.CI_COMMIT_SHA}` : undefined,
          branch: given(env.CI_MERGE_REQUEST_SOURCE_BRANCH_NAME) ?? env.CI_COMMIT_REF_NAME,
          pr: env.CI_MERGE_REQUEST_IID,
          pipeline: env.CI_PIPELINE_URL,
          actor: env.GITLAB_USER_LOGIN,
          repo: env.CI_PROJECT_PATH,
        }
      : undefined,
  (env) =>
    env.BUILDKITE === 'true'
      ? {
          ci: 'buildkite',
          commit: env.BUILDKITE_COMMIT,
          branch: env.BUILDKITE_BRANCH,
          pr: given(env.BUILDKITE_PULL_REQUEST),
          pipeline: env.BUILDKITE_BUILD_URL,
          actor: given(env.BUILDKITE_BUILD_CREATOR) ?? env.BUILDKITE_BUILD_AUTHOR,
          repo: env.BUILDKITE_PIPELINE_SLUG,
        }
      : undefined,
  (env) =>
    env.CIRCLECI === 'true'
      ? {
          ci: 'circleci',
          commit: env.CIRCLE_SHA1,
          branch: env.CIRCLE_BRANCH,
          pr: given(env.CIRCLE_PR_NUMBER) ?? /\/(\d+)$/.exec(env.CIRCLE_PULL_REQUEST ?? '')?.[1],
          pipeline: env.CIRCLE_BUILD_URL,
          actor: env.CIRCLE_USERNAME,
          repo: env.CIRCLE_PROJECT_USERNAME && env.CIRCLE_PROJECT_REPONAME ? `${env.CIRCLE_PROJECT_USERNAME}/${env.CIRCLE_PROJECT_REPONAME}` : undefined,
        }
      : undefined,
  (env) =>
    given(env.JENKINS_URL) !== undefined
      ? {
          ci: 'jenkins',
          commit: env.GIT_COMMIT,
          branch: given(env.CHANGE_BRANCH) ?? given(env.BRANCH_NAME) ?? env.GIT_BRANCH,
          pr: env.CHANGE_ID,
          pipeline: env.BUILD_URL,
          actor: given(env.CHANGE_AUTHOR) ?? env.BUILD_USER_ID,
          repo: env.JOB_NAME,
        }
      : undefined,
];

/** The labels of the CI this runs in (none outside a known CI); empty values are left out, long ones cut to the limit. */
export function ciLabels(env: Env): Record<string, string> {
  for (const read of READERS) {
    const reading = read(env);
    if (!reading) continue;
    const labels: Record<string, string> = {};
    for (const [key, value] of Object.entries(reading)) {
      const text = given(value as string | undefined);
      if (text !== undefined) labels[key] = text.slice(0, LABEL_RULES.maxValueLength);
    }
    return labels;
  }
  return {};
}

/**
 * The concurrency group a set gets by default in GitHub Actions: its repository,
 * workflow and ref (`owner/repo/CI@refs/pull/42/merge`), so a new push to a
 * pull request supersedes the set of the previous one, as the workflow's own
 * `concurrency: cancel-in-progress` would. Undefined elsewhere (no default).
 */
export function ciConcurrencyGroup(env: Env): string | undefined {
  if (env.GITHUB_ACTIONS !== 'true') return undefined;
  const [repo, workflow, ref] = [given(env.GITHUB_REPOSITORY), given(env.GITHUB_WORKFLOW), given(env.GITHUB_REF)];
  if (repo === undefined || workflow === undefined || ref === undefined) return undefined;
  return `${repo}/${workflow}@${ref}`.slice(0, LABEL_RULES.maxValueLength);
}

export class LabelError extends Error {}

/** `--label k=v`: checked as the server would, so a typo fails before anything is created. */
export function parseLabel(text: string): [string, string] {
  const at = text.indexOf('=');
  const key = at < 0 ? text : text.slice(0, at);
  if (at < 0) throw new LabelError(`--label expects KEY=VALUE, such as branch=main; got "${text.slice(0, 80)}"`);
  if (!LABEL_RULES.keyPattern.test(key)) throw new LabelError(`--label key "${key.slice(0, 80)}" must be 1-64 of a-z, 0-9, "_", "." and "-"`);
  const value = text.slice(at + 1);
  if (value.length > LABEL_RULES.maxValueLength) throw new LabelError(`--label ${key}: the value is ${value.length} characters; at most ${LABEL_RULES.maxValueLength}`);
  return [key, value];
}
