/**
 * GitLab: a set with a commit becomes a commit status on it
 * (`POST /projects/:id/statuses/:sha`): `running` while the set runs, then
 * `success`, `failed` or `canceled`, named by the configured status name and
 * linked to the set's page. GitLab keeps one status per name and commit.
 */
import { nameFor, type GitLabConfig } from '../../core/code-hosts.js';
import { answerError, secretValue, type HostRequest } from './http.js';
import { headline, outcomeOf, type SentReport, type SetOutcome, type SetSnapshot } from './report.js';

const USER_AGENT = 'runset-checks/1';
/** GitLab cuts a status's description at 255 characters. */
const MAX_DESCRIPTION = 255;

const STATE: Record<SetOutcome, 'running' | 'success' | 'failed' | 'canceled'> = { running: 'running', success: 'success', failure: 'failed', cancelled: 'canceled' };

export interface GitLabReportContext {
  request: HostRequest;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
}

/** Posts the set's state as the commit's status; returns GitLab's status and the JSON body sent. */
export async function reportOnGitLab(config: GitLabConfig, snapshot: SetSnapshot, ctx: GitLabReportContext): Promise<SentReport> {
  const token = secretValue(config.token, ctx.env, 'GitLab token');
  const body = {
    state: STATE[outcomeOf(snapshot)],
    name: nameFor(config.statusName, snapshot.set.env),
    target_url: snapshot.dashboardUrl,
    description: headline(snapshot).slice(0, MAX_DESCRIPTION),
  };
  const path = `/projects/${encodeURIComponent(config.project)}/statuses/${encodeURIComponent(snapshot.commit)}`;
  const answer = await ctx.request(`${config.apiUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'private-token': token, 'user-agent': USER_AGENT },
    body: JSON.stringify(body),
    signal: ctx.signal,
  });
  if (answer.status >= 200 && answer.status <= 299) return { statusCode: answer.status, body: JSON.stringify(body) };
  // GitLab refuses to post a status's current state again (400 "Cannot transition status via :run from :running"):
  // an attempt retried after a post whose answer was lost finds its state already there, which is what it wanted.
  if (answer.status === 400 && alreadyInState(answer.json)) return { statusCode: answer.status, body: JSON.stringify(body) };
  throw answerError('posting the commit status', answer);
}

function alreadyInState(json: unknown): boolean {
  const message = (json as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('Cannot transition status');
}
