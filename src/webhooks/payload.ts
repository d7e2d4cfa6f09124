/**
 * What a webhook delivery says: the set's status document (the seed's shape),
 * its environment, the failed tests (name and the first line of the error) and
 * the dashboard link — as JSON, or as a Slack message (`format: slack`).
 */
import type { TestRunRecord, TestRunSetRecord } from '../core/types.js';
import type { SetEventName, WebhookFormat } from '../core/webhooks.js';
import { statusDocument } from '../core/wire.js';

/** The most failed tests a JSON body lists (the rest are counted); Slack shows fewer. */
export const MAX_FAILED_LISTED = 50;
const SLACK_FAILED_LISTED = 10;
const ERROR_LINE_CHARS = 300;

export interface FailedTest {
  name: string;
  error: string | null;
}

export interface SetReport {
  event: SetEventName;
  deliveryId: string;
  set: TestRunSetRecord;
  members: readonly TestRunRecord[];
  dashboardUrl: string;
  /** Why the set was ended early (`cancelled`, `superseded by <id>`, `set timeout 60m reached`, …); null or absent: it was not. */
  cancelled?: string | null;
}

/** An error's first non-blank line, cut at 300 characters; null for none. */
export function errorLine(error: string | null): string | null {
  return error === null ? null : (error.split('\n').find((line) => line.trim() !== '') ?? '').slice(0, ERROR_LINE_CHARS);
}

/** The failed members in set order, each with its error's first line. */
export function failedTests(members: readonly TestRunRecord[]): FailedTest[] {
  return members.filter((m) => m.status === 'FAIL').map((m) => ({ name: m.name, error: errorLine(m.error) }));
}

export function renderBody(format: WebhookFormat, report: SetReport): string {
  return JSON.stringify(format === 'slack' ? slackMessage(report) : jsonBody(report));
}

function jsonBody(report: SetReport) {
  const failed = failedTests(report.members);
  return {
    event: report.event,
    deliveryId: report.deliveryId,
    env: report.set.env,
    testRunSet: statusDocument(report.set),
    failedTests: failed.slice(0, MAX_FAILED_LISTED),
    failedTestsNotListed: Math.max(0, failed.length - MAX_FAILED_LISTED),
    cancelled: report.cancelled ?? null,
    url: report.dashboardUrl,
  };
}

/** Slack's mrkdwn needs &, < and > escaped; nothing else is special in a text object. */
function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function slackMessage(report: SetReport) {
  const { set } = report;
  const c = set.counts;
  const link = `<${report.dashboardUrl}|open the set>`;
  const env = escapeSlack(set.env);
  const headline =
    report.event === 'set.started'
      ? `:hourglass_flowing_sand: *${env}*: a test run set started (${c.WAITING + c.RUNNING} tests) · ${link}`
      : `${set.status === 'SUCCESS' ? ':white_check_mark:' : ':x:'} *${env}*: ${set.status}${report.cancelled ? ` (${escapeSlack(report.cancelled)})` : ''} · ${c.FAIL} failed, ${c.SUCCESS} passed · ${link}`;
  const failed = failedTests(report.members);
  const lines = failed.slice(0, SLACK_FAILED_LISTED).map((t) => `• *${escapeSlack(t.name)}*${t.error ? ` — ${escapeSlack(t.error)}` : ''}`);
  if (failed.length > SLACK_FAILED_LISTED) lines.push(`…and ${failed.length - SLACK_FAILED_LISTED} more`);
  const blocks: object[] = [{ type: 'section', text: { type: 'mrkdwn', text: headline } }];
  if (lines.length > 0) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: lines.join('\n').slice(0, 2900) } });
  // `text` is what notifications and clients without blocks show.
  return { text: `runset ${set.env}: ${report.event === 'set.started' ? 'started' : set.status}`, blocks };
}
