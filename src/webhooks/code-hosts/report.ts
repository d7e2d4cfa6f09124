/**
 * What a code host is told of a set, whatever the host: the set as it stands
 * when the attempt is made (not when its event was written), so an attempt
 * that comes late — a start retried after the end — never puts an older state
 * back on the commit.
 */
import type { PlaywrightCase, TestRunRecord, TestRunSetRecord } from '../../core/types.js';
import { errorLine } from '../payload.js';

/** GitHub takes at most 50 annotations per request. */
export const MAX_ANNOTATIONS = 50;

export interface SetSnapshot {
  set: TestRunSetRecord;
  members: readonly TestRunRecord[];
  /** The Playwright case of each member that runs one, by member id. */
  cases: ReadonlyMap<string, PlaywrightCase>;
  commit: string;
  /** Why the set was ended early (`cancelled`, `superseded by …`); null: it was not. */
  cancelled: string | null;
  dashboardUrl: string;
}

/** What one attempt sent: the code host's last answer status, and the JSON body ('' when nothing needed sending). */
export interface SentReport {
  statusCode: number | null;
  body: string;
}

export type SetOutcome = 'running' | 'success' | 'failure' | 'cancelled';

export function outcomeOf(snapshot: SetSnapshot): SetOutcome {
  const { status } = snapshot.set;
  if (status === 'WAITING' || status === 'RUNNING') return 'running';
  if (status === 'SUCCESS') return 'success';
  return snapshot.cancelled ? 'cancelled' : 'failure';
}

/** One line: the counts so far, or the result. */
export function headline(snapshot: SetSnapshot): string {
  const c = snapshot.set.counts;
  const total = c.WAITING + c.RUNNING + c.SUCCESS + c.FAIL;
  const outcome = outcomeOf(snapshot);
  if (outcome === 'running') return `${c.SUCCESS + c.FAIL} of ${total} tests done, ${c.FAIL} failed`;
  const tail = outcome === 'cancelled' ? ` (${snapshot.cancelled})` : '';
  return `${c.FAIL} failed, ${c.SUCCESS} passed of ${total} tests${tail}`;
}

/** The check's Markdown summary: counts, the dashboard link, and the failed tests (names and first error lines). */
export function markdownSummary(snapshot: SetSnapshot): string {
  const c = snapshot.set.counts;
  const lines = [
    `**${snapshot.set.env}**: ${headline(snapshot)}.`,
    '',
    '| passed | failed | running | waiting |',
    '|---:|---:|---:|---:|',
    `| ${c.SUCCESS} | ${c.FAIL} | ${c.RUNNING} | ${c.WAITING} |`,
    '',
    `[Open the set in runset](${snapshot.dashboardUrl})`,
  ];
  const failed = snapshot.members.filter((m) => m.status === 'FAIL');
  if (failed.length > 0) {
    lines.push('', '**Failed tests**', '');
    for (const m of failed.slice(0, 100)) lines.push(`- \`${m.name.replace(/`/g, "'")}\`${m.error ? ` — ${errorLine(m.error)}` : ''}`);
    if (failed.length > 100) lines.push(`- …and ${failed.length - 100} more`);
  }
  return lines.join('\n').slice(0, 65_000);
}

export interface FailureAnnotation {
  /** In the repository: the configured prefix, then the case's file (relative to Playwright's testDir). */
  path: string;
  line: number;
  title: string;
  message: string;
}

/** Each failed Playwright case, at its file and line, with its error's first line: the first MAX_ANNOTATIONS, and how many more there were. */
export function failureAnnotations(snapshot: SetSnapshot, pathPrefix: string): { annotations: FailureAnnotation[]; notAnnotated: number } {
  const all: FailureAnnotation[] = [];
  for (const member of snapshot.members) {
    const found = snapshot.cases.get(member.id);
    if (member.status !== 'FAIL' || !found) continue;
    all.push({ path: `${pathPrefix}${found.file}`, line: Math.max(1, found.line), title: member.name.slice(0, 255), message: errorLine(member.error) || 'failed' });
  }
  return { annotations: all.slice(0, MAX_ANNOTATIONS), notAnnotated: Math.max(0, all.length - MAX_ANNOTATIONS) };
}
