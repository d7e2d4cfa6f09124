/**
 * Code hosts as delivery targets of the webhook outbox: a set with a `commit`
 * label is reported on its commit (a GitHub check run, a GitLab commit status)
 * by deliveries named `github:check-run` and `gitlab:commit-status`, retried,
 * leased and listed like any webhook's. Each attempt reads the set as it
 * stands and reports that (./report.ts).
 */
import type { CodeHostsConfig, CodeHostTarget, GitLabConfig } from '../../core/code-hosts.js';
import { codeHostTargets, GITHUB_TARGET } from '../../core/code-hosts.js';
import type { DueDelivery, SetEvent } from '../../core/webhooks.js';
import type { Store } from '../../store/store.js';
import { gitHubToken, GitHubAppTokens } from './github-api.js';
import { reportOnGitHub } from './github.js';
import { reportOnGitLab } from './gitlab.js';
import { HostCallError, type HostRequest, type RetryAdvice } from './http.js';
import type { SentReport, SetSnapshot } from './report.js';

export { outboundRequest, type HostRequest } from './http.js';

export interface CodeHostReportsOptions {
  store: Store;
  config: () => CodeHostsConfig;
  request: HostRequest;
  setUrl: (setId: string) => string;
  env?: NodeJS.ProcessEnv;
}

/** One attempt's result: sent (error null) or not, and whether to try again. */
export interface CodeHostAttempt {
  statusCode: number | null;
  error: string | null;
  retry: RetryAdvice;
  /** What was sent (for the delivery's record); never a credential. */
  body: string;
}

export class CodeHostReports {
  private readonly appTokens = new GitHubAppTokens();

  constructor(private readonly opts: CodeHostReportsOptions) {}

  /** The code-host deliveries a set event makes. */
  targets(event: SetEvent): CodeHostTarget[] {
    return codeHostTargets(this.opts.config(), event);
  }

  /** Reports the delivery's set on its target; throws only what the caller treats as any failed attempt (no answer, a timeout). */
  async deliver(delivery: DueDelivery, target: CodeHostTarget, signal: AbortSignal): Promise<CodeHostAttempt> {
    const env = this.opts.env ?? process.env;
    const hosts = this.opts.config();
    const github = target === GITHUB_TARGET ? hosts.github : null;
    const gitlab = target === GITHUB_TARGET ? null : hosts.gitlab;
    if (!github && !gitlab) return given(`the ${target === GITHUB_TARGET ? 'github' : 'gitlab'} block is no longer in the config`);
    const snapshot = await this.snapshot(delivery.setId);
    if (!snapshot) return given(`test run set ${delivery.setId} no longer exists, or has no commit label`);
    try {
      let sent: SentReport;
      if (github) {
        const bearer = await gitHubToken(github, this.appTokens, this.opts.request, env, signal);
        sent = await reportOnGitHub(github, snapshot, { request: this.opts.request, bearer, signal });
      } else {
        sent = await reportOnGitLab(gitlab as GitLabConfig, snapshot, { request: this.opts.request, env, signal });
      }
      return { ...sent, error: null, retry: { kind: 'never' } };
    } catch (err) {
      if (!(err instanceof HostCallError)) throw err;
      return { statusCode: err.statusCode, error: err.message, retry: err.retry, body: '' };
    }
  }

  private async snapshot(setId: string): Promise<SetSnapshot | null> {
    const { store } = this.opts;
    const [set, members, control, cases, asked] = await Promise.all([
      store.sets.get(setId),
      store.sets.listRuns(setId),
      store.sets.control(setId),
      store.setViews.playwrightCases(setId),
      store.setViews.asked(setId),
    ]);
    const commit = asked?.labels.commit;
    if (!set || !commit) return null;
    return { set, members, cases, commit, cancelled: control?.cancellation?.error ?? null, dashboardUrl: this.opts.setUrl(set.id) };
  }
}

function given(error: string): CodeHostAttempt {
  return { statusCode: null, error, retry: { kind: 'never' }, body: '' };
}
