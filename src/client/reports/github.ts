/**
 * GitHub Actions integration, through the runner's documented files and workflow
 * commands: a Markdown table for `$GITHUB_STEP_SUMMARY`, `::error`/`::warning`
 * annotations, and step output lines for `$GITHUB_OUTPUT`. Pure text builders:
 * the trigger does the writing (and the redaction) in one place.
 */
import { randomUUID } from 'node:crypto';
import { formatDuration } from '../../core/duration.js';
import { isFlaky, isQuarantined, isSkipped, type TestRun } from '../types.js';
import { countsOf, failedMembers, flakyMembers, memberDurationMs, oneLine, failedText, passedText, restartedMembers, setDurationMs, unfinishedMembers, type ReportInput } from './model.js';
import { ranAgainText, wasRestarted } from '../../core/starts.js';

/** Workflow command message: GitHub's escaping for `%`, CR and LF. */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Workflow command property (e.g. `title=`): the message rules plus `:` and `,`. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

function command(kind: 'error' | 'warning' | 'notice', title: string, message: string): string {
  return `::${kind} title=${escapeProperty(title)}::${escapeData(message)}`;
}

/** One annotation per failed member (or for the set), a warning per flaky member, a notice per member started again after a lost start. */
export function annotations(input: ReportInput): string[] {
  const lines: string[] = [];
  const members = input.members;
  if (members) {
    for (const run of failedMembers(members)) lines.push(command('error', `runset: ${run.name}`, run.error ?? 'failed'));
    for (const run of flakyMembers(members)) lines.push(command('warning', `runset flaky: ${run.name}`, `passed after ${run.attempts} attempts`));
    // Ran again because a start was lost: a notice, not a warning about the test.
    for (const run of restartedMembers(members)) lines.push(command('notice', `runset ran again: ${run.name}`, ranAgainText(run) ?? `started ${run.starts ?? 1} times`));
  }
  const counts = countsOf(input);
  if (input.outcome === 'TIMEOUT') {
    lines.push(command('error', 'runset: timed out', `test run set ${input.setId} (env ${input.env}) not finished: ${counts.unfinished} of ${counts.total} tests still pending`));
  } else if (input.outcome === 'FAIL' && (!members || failedMembers(members).length === 0)) {
    lines.push(command('error', 'runset: test run set failed', `test run set ${input.setId} (env ${input.env}): ${counts.failed} of ${counts.total} tests failed`));
  }
  return lines;
}

/** A Markdown table cell: one line, no pipes or HTML that would break the table. */
function cell(text: string): string {
  return oneLine(text, 160).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const ICON: Record<string, string> = { SUCCESS: '✅', FAIL: '❌', TIMEOUT: '⏱️' };
/** GitHub caps a step summary at 1 MiB; a long table is cut, failures first. */
const MAX_ROWS = 200;

function memberRow(run: TestRun): string {
  const state =
    run.status === 'FAIL' ? (isQuarantined(run) ? '🚧 failed (quarantined)' : '❌ failed') : isFlaky(run) ? '⚠️ flaky' : isSkipped(run) ? '⏭️ skipped' : run.status === 'SUCCESS' ? '✅ passed' : `⏳ ${cell(run.status)}`;
  const ranAgain = wasRestarted(run) ? cell(ranAgainText(run) ?? '') : '';
  const error = run.status === 'FAIL' ? [cell(run.error ?? 'failed'), ranAgain].filter(Boolean).join(' · ') : isFlaky(run) ? `passed after ${run.attempts} attempts` : ranAgain;
  return `| ${state} | ${cell(run.name)} | ${cell(run.type)} | ${run.attempts} | ${formatDuration(memberDurationMs(run))} | ${error} |`;
}

export function stepSummaryMarkdown(input: ReportInput): string {
  const counts = countsOf(input);
  const title = `## ${ICON[input.outcome] ?? ''} runset: ${input.outcome === 'TIMEOUT' ? 'timed out' : input.outcome} — env \`${cell(input.env)}\``;
  const parts = [`${counts.total} tests`, passedText(counts), failedText(counts)];
  if (counts.unfinished > 0) parts.push(`${counts.unfinished} not finished`);
  const set = input.dashboardUrl ? `[Test Run Set \`${input.setId}\`](${input.dashboardUrl})` : `Test Run Set \`${input.setId}\``;
  const lines = [title, '', `${set} · ${parts.join(' · ')} · ${formatDuration(setDurationMs(input))}`, ''];
  const members = input.members;
  if (!members) {
    lines.push('_This server does not list the members of a set._', '');
    return `${lines.join('\n')}\n`;
  }
  // Failures, then flaky, then unfinished, then the rest: what needs a look comes first.
  const rank = (run: TestRun) => (run.status === 'FAIL' ? 0 : isFlaky(run) ? 1 : run.status !== 'SUCCESS' ? 2 : 3);
  const ordered = [...members].sort((a, b) => rank(a) - rank(b));
  lines.push('| Result | Test | Type | Attempts | Duration | Error |', '|---|---|---|---|---|---|');
  lines.push(...ordered.slice(0, MAX_ROWS).map(memberRow));
  if (ordered.length > MAX_ROWS) lines.push('', `_…and ${ordered.length - MAX_ROWS} more._`);
  if (unfinishedMembers(members).length > 0 && input.outcome !== 'TIMEOUT') lines.push('', '_Some members were not finished._');
  return `${lines.join('\n')}\n\n`;
}

/**
 * `$GITHUB_OUTPUT` lines. A value with a newline (never expected here) uses the
 * heredoc form with a random delimiter, so a value cannot forge another output.
 */
export function outputLines(outputs: Record<string, string>): string {
  return Object.entries(outputs)
    .map(([name, value]) => {
      if (!/[\r\n]/.test(value)) return `${name}=${value}\n`;
      const delimiter = `runset_${randomUUID()}`;
      return `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
    })
    .join('');
}
