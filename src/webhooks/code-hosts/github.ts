/**
 * GitHub: a set with a commit becomes one check run on that commit. Every
 * attempt finds the set's check run first (by `external_id`, the set's id), then
 * creates it or brings it up to date, so a retried or late attempt never makes
 * a second one: `in_progress` with the counts so far while the set runs,
 * `completed` with its conclusion, summary and annotations once it has ended.
 * A check run that is already completed is left alone — GitHub appends the
 * annotations of every update, so they are sent once.
 */
import { nameFor, type GitHubConfig } from '../../core/code-hosts.js';
import { callGitHub } from './github-api.js';
import type { HostRequest } from './http.js';
import { failureAnnotations, headline, markdownSummary, outcomeOf, type SentReport, type SetSnapshot } from './report.js';

interface CheckRun {
  id: number;
  status: string;
  external_id: string | null;
}

export interface GitHubReportContext {
  request: HostRequest;
  bearer: string;
  signal: AbortSignal;
}

/** Brings the set's check run up to date; returns the last answer's status and the JSON body sent ('' when nothing needed sending). */
export async function reportOnGitHub(config: GitHubConfig, snapshot: SetSnapshot, ctx: GitHubReportContext): Promise<SentReport> {
  const { set, commit } = snapshot;
  const name = nameFor(config.checkName, set.env);
  const repoPath = `/repos/${config.owner}/${config.repo}`;
  const call = (method: string, path: string, what: string, body?: unknown) =>
    callGitHub(ctx.request, { apiUrl: config.apiUrl, bearer: ctx.bearer, method, path, what, signal: ctx.signal, ...(body !== undefined ? { body } : {}) });

  const query = new URLSearchParams({ check_name: name, filter: 'all', per_page: '100' });
  const listed = await call('GET', `${repoPath}/commits/${encodeURIComponent(commit)}/check-runs?${query.toString()}`, "listing the commit's check runs");
  const existing = ((listed.json as { check_runs?: CheckRun[] } | null)?.check_runs ?? []).find((run) => run.external_id === set.id);
  if (existing?.status === 'completed') return { statusCode: listed.status, body: '' };

  const body = checkRunBody(config, snapshot);
  if (existing) {
    const updated = await call('PATCH', `${repoPath}/check-runs/${existing.id}`, 'updating the check run', body);
    return { statusCode: updated.status, body: JSON.stringify(body) };
  }
  const created = { name, head_sha: commit, external_id: set.id, details_url: snapshot.dashboardUrl, ...body };
  const answer = await call('POST', `${repoPath}/check-runs`, 'creating the check run', created);
  return { statusCode: answer.status, body: JSON.stringify(created) };
}

/** What a check run says of the set as it stands. */
function checkRunBody(config: GitHubConfig, snapshot: SetSnapshot) {
  const outcome = outcomeOf(snapshot);
  const title = headline(snapshot);
  const summary = markdownSummary(snapshot);
  const started = snapshot.set.startedAt ?? snapshot.set.createdAt;
  if (outcome === 'running') return { status: 'in_progress', started_at: started, output: { title, summary } };
  const { annotations, notAnnotated } = failureAnnotations(snapshot, config.pathPrefix);
  const more = notAnnotated > 0 ? `\n\n${notAnnotated} more failed Playwright cases are not annotated (GitHub takes ${annotations.length} per request).` : '';
  return {
    status: 'completed',
    conclusion: outcome,
    started_at: started,
    completed_at: snapshot.set.endedAt ?? new Date().toISOString(),
    output: {
      title,
      summary: summary + more,
      annotations: annotations.map((a) => ({ path: a.path, start_line: a.line, end_line: a.line, annotation_level: 'failure', title: a.title, message: a.message })),
    },
  };
}
