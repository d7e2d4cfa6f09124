/**
 * Newman's `json` reporter output (`--reporters json --reporter-json-export`):
 * `collection` (the collection as run, each item with an id, even one the
 * file gave none), `run.executions` (one per request sent: its item's id, its
 * cursor, its response time, its assertions, a request error) and
 * `run.failures` (every failed assertion, script error and request error,
 * with the cursor of the execution it belongs to). A request is FAILED when a
 * failure belongs to it, skipped when every assertion it has was skipped
 * (`pm.test.skip`), passed otherwise. A request run in several iterations
 * (`-n`, a data file) is one case: failed if any iteration failed, its
 * durations summed.
 */
import type { FrameworkReport, ReportedCase } from './adapter.js';

interface Item {
  id?: string;
  name?: string;
  item?: Item[];
}

interface Failure {
  error?: { name?: string; message?: string; test?: string };
  at?: string;
  source?: { id?: string };
  cursor?: { ref?: string };
}

interface Execution {
  id?: string;
  cursor?: { ref?: string };
  item?: { id?: string; name?: string };
  response?: { responseTime?: number };
  assertions?: Array<{ assertion?: string; skipped?: boolean }>;
  requestError?: { message?: string; code?: string };
}

interface NewmanJson {
  collection?: { info?: { name?: string }; item?: Item[] };
  run?: { executions?: Execution[]; failures?: Failure[]; error?: unknown };
}

export function readNewmanJson(text: string, _dir: string): FrameworkReport {
  let raw: NewmanJson;
  try {
    raw = JSON.parse(text) as NewmanJson;
  } catch (error) {
    throw new Error(`the report is not JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(raw.run?.executions) || !Array.isArray(raw.collection?.item)) throw new Error('the report has no "collection.item" and "run.executions"');
  const collection = raw.collection?.info?.name ?? '';
  const paths = new Map<string, string[]>();
  const walk = (items: Item[], folders: string[]): void => {
    for (const item of items) {
      const titles = [...folders, item.name ?? ''];
      if (Array.isArray(item.item)) walk(item.item, titles);
      else if (item.id !== undefined) paths.set(item.id, titles);
    }
  };
  walk(raw.collection?.item ?? [], []);
  const failures = raw.run?.failures ?? [];
  const byItem = new Map<string, ReportedCase>();
  for (const e of raw.run?.executions ?? []) {
    const titles = e.item?.id === undefined ? undefined : paths.get(e.item.id);
    if (titles === undefined) continue;
    const own = failures.filter((f) => (f.cursor?.ref !== undefined && f.cursor.ref === e.cursor?.ref) || (f.cursor?.ref === undefined && f.source?.id === e.item?.id));
    const messages = own.map(failureText);
    if (e.requestError && !own.some((f) => f.at === 'request')) messages.push(`request: ${e.requestError.message ?? e.requestError.code ?? 'failed'}`);
    const assertions = e.assertions ?? [];
    const status: ReportedCase['status'] = messages.length > 0 ? 'failed' : assertions.length > 0 && assertions.every((a) => a.skipped === true) ? 'skipped' : 'passed';
    const durationMs = Math.max(0, Math.round(e.response?.responseTime ?? 0));
    const key = e.item?.id as string;
    const before = byItem.get(key);
    if (before === undefined) {
      byItem.set(key, { file: collection, titles, status, durationMs, attempts: status === 'skipped' ? 0 : 1, error: messages[0] ?? null, output: messages.join('\n') });
    } else {
      before.durationMs += durationMs;
      if (status === 'failed' && before.status !== 'failed') Object.assign(before, { status, attempts: 1, error: messages[0] ?? null });
      if (messages.length > 0) before.output = [before.output, ...messages].filter((m) => m !== '').join('\n');
    }
  }
  return { cases: [...byItem.values()], fileErrors: new Map() };
}

/** A failure as Newman's CLI says it: the assertion's name (when one failed), then the error. */
function failureText(f: Failure): string {
  const what = `${f.error?.name ?? 'Error'}: ${f.error?.message ?? 'failed'}`;
  if (f.error?.test) return `${f.error.test}: ${what}`;
  return f.at ? `${f.at}: ${what}` : what;
}
