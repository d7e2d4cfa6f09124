/** The CI context `runset trigger` sends as labels: each CI's variables, table-driven; `--label` parsing. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ciLabels, LabelError, parseLabel } from '../../src/client/ci-labels.js';

const CASES: Array<{ ci: string; env: Record<string, string>; labels: Record<string, string> }> = [
  {
    ci: 'GitHub Actions, a pull request',
    env: {
      GITHUB_ACTIONS: 'true', GITHUB_SHA: 'a1b2c3', GITHUB_REF: 'refs/pull/42/merge', GITHUB_REF_NAME: '42/merge', GITHUB_HEAD_REF: 'feature/login',
      GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/shop', GITHUB_RUN_ID: '987', GITHUB_RUN_ATTEMPT: '2', GITHUB_ACTOR: 'octocat',
    },
    labels: { ci: 'github', commit: 'a1b2c3', commit_url: 'https://github.com/acme/shop/commit/a1b2c3', branch: 'feature/login', pr: '42', pipeline: 'https://github.com/acme/shop/actions/runs/987/attempts/2', actor: 'octocat', repo: 'acme/shop' },
  },
  {
    ci: 'GitHub Actions, a push',
    env: { GITHUB_ACTIONS: 'true', GITHUB_SHA: 'ffff', GITHUB_REF: 'refs/heads/main', GITHUB_REF_NAME: 'main', GITHUB_HEAD_REF: '', GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/shop', GITHUB_RUN_ID: '5', GITHUB_RUN_ATTEMPT: '1' },
    labels: { ci: 'github', commit: 'ffff', commit_url: 'https://github.com/acme/shop/commit/ffff', branch: 'main', pipeline: 'https://github.com/acme/shop/actions/runs/5', repo: 'acme/shop' },
  },
  {
    ci: 'GitLab CI, a merge request',
    env: {
      GITLAB_CI: 'true', CI_COMMIT_SHA: 'c0ffee', CI_COMMIT_REF_NAME: 'refs/merge-requests/7/head', CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'fix-cart',
      CI_MERGE_REQUEST_IID: '7', CI_PROJECT_URL: 'https://gitlab.com/acme/shop', CI_PIPELINE_URL: 'https://gitlab.com/acme/shop/-/pipelines/55', GITLAB_USER_LOGIN: 'dev', CI_PROJECT_PATH: 'acme/shop',
    },
    labels: { ci: 'gitlab', commit: 'c0ffee', commit_url: 'https://gitlab.com/acme/shop/-/commit/c0ffee', branch: 'fix-cart', pr: '7', pipeline: 'https://gitlab.com/acme/shop/-/pipelines/55', actor: 'dev', repo: 'acme/shop' },
  },
  {
    ci: 'Buildkite, not a pull request',
    env: { BUILDKITE: 'true', BUILDKITE_COMMIT: 'bead', BUILDKITE_BRANCH: 'main', BUILDKITE_PULL_REQUEST: 'false', BUILDKITE_BUILD_URL: 'https://buildkite.com/acme/shop/builds/12', BUILDKITE_BUILD_CREATOR: 'Ada', BUILDKITE_PIPELINE_SLUG: 'shop' },
    labels: { ci: 'buildkite', commit: 'bead', branch: 'main', pipeline: 'https://buildkite.com/acme/shop/builds/12', actor: 'Ada', repo: 'shop' },
  },
  {
    ci: 'CircleCI, a pull request by its URL',
    env: { CIRCLECI: 'true', CIRCLE_SHA1: 'abc', CIRCLE_BRANCH: 'pull/9', CIRCLE_PULL_REQUEST: 'https://github.com/acme/shop/pull/9', CIRCLE_BUILD_URL: 'https://circleci.com/gh/acme/shop/77', CIRCLE_USERNAME: 'lin', CIRCLE_PROJECT_USERNAME: 'acme', CIRCLE_PROJECT_REPONAME: 'shop' },
    labels: { ci: 'circleci', commit: 'abc', branch: 'pull/9', pr: '9', pipeline: 'https://circleci.com/gh/acme/shop/77', actor: 'lin', repo: 'acme/shop' },
  },
  {
    ci: 'Jenkins, a multibranch pull request',
    env: { JENKINS_URL: 'https://ci.acme.example/', GIT_COMMIT: 'd00d', BRANCH_NAME: 'PR-3', CHANGE_BRANCH: 'feature/x', CHANGE_ID: '3', BUILD_URL: 'https://ci.acme.example/job/shop/job/PR-3/4/', CHANGE_AUTHOR: 'sam', JOB_NAME: 'shop/PR-3' },
    labels: { ci: 'jenkins', commit: 'd00d', branch: 'feature/x', pr: '3', pipeline: 'https://ci.acme.example/job/shop/job/PR-3/4/', actor: 'sam', repo: 'shop/PR-3' },
  },
  { ci: 'no CI', env: { HOME: '/root', CI: 'true' }, labels: {} },
];

describe('CI labels', () => {
  for (const { ci, env, labels } of CASES) {
    test(ci, () => assert.deepEqual(ciLabels(env), labels));
  }
  test('a value longer than 256 characters is cut', () => {
    assert.equal(ciLabels({ GITHUB_ACTIONS: 'true', GITHUB_REF_NAME: 'b'.repeat(300) }).branch?.length, 256);
  });
});

describe('--label', () => {
  test('KEY=VALUE, the value may hold "=" and be empty', () => {
    assert.deepEqual(parseLabel('branch=main'), ['branch', 'main']);
    assert.deepEqual(parseLabel('note=a=b'), ['note', 'a=b']);
    assert.deepEqual(parseLabel('empty='), ['empty', '']);
  });
  test('refused with what is accepted', () => {
    assert.throws(() => parseLabel('branch'), (e: Error) => e instanceof LabelError && /KEY=VALUE/.test(e.message));
    assert.throws(() => parseLabel('Branch=x'), /1-64 of a-z/);
    assert.throws(() => parseLabel(`k=${'v'.repeat(257)}`), /257 characters; at most 256/);
  });
});
