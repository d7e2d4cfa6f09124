/**
 * A set's failures by cause (../failure-groups.ts): "3 tests: TimeoutError:
 * locator.fill: Timeout <duration> exceeded." with the tests listed under it,
 * each marked from its history in the environment (../failure-trend.ts) as
 * newly failing, failing again or failing often. The marks are words, so they
 * read without colour.
 */
import { useEffect, useState } from 'preact/hooks';
import { firstLine, groupFailures } from '../failure-groups.js';
import { cancelledBy, failureTrend, TREND_TEXT, WINDOW, type TrendVerdict } from '../failure-trend.js';
import { api, type Member } from './api.js';
import { testHref } from './router.js';

/** History is read per failed test: past this many, the rest go unmarked rather than flooding the API. */
const MAX_LOOKUPS = 25;
/** Runs read per test: its last WINDOW, plus room for runs of later sets when the set is an old one. */
const HISTORY_RUNS = WINDOW * 2;
const LOOKUPS_AT_ONCE = 4;

export function FailureGroups({ setId, env, members, ended }: { setId: string; env: string | undefined; members: Member[]; ended: boolean }) {
  const groups = groupFailures(members);
  const trends = useTrends(env, ended ? groups.flatMap((g) => g.members).filter((m) => !cancelledBy(m.error)) : []);
  if (groups.length === 0) return null;
  const failed = groups.reduce((n, g) => n + g.members.length, 0);
  return (
    <section aria-labelledby="failures-heading">
      <h2 id="failures-heading">Failures by cause</h2>
      <p class="muted">
        {failed} failed test{failed === 1 ? '' : 's'} in {groups.length} group{groups.length === 1 ? '' : 's'}: errors whose first lines differ only in
        numbers, durations, ids and quoted values are one group.
        {ended && failed > MAX_LOOKUPS && ` Only the first ${MAX_LOOKUPS} are marked new or frequent.`}
      </p>
      <ul class="failure-groups">
        {groups.map((group) => (
          <li key={group.signature} class="failure-group" data-signature={group.signature}>
            <p class="failure-head">
              <strong>
                {group.members.length} test{group.members.length === 1 ? '' : 's'}:
              </strong>{' '}
              <code>{group.signature}</code>
            </p>
            <ul>
              {group.members.map((m) => (
                <li key={m.id} data-member={m.name}>
                  <a href={`/sets/${setId}/runs/${m.id}`}>{m.name}</a>
                  {env && <TrendMark env={env} name={m.name} verdict={trends[m.id]} />}
                  {firstLine(m.error) !== group.example && <span class="muted mono"> {firstLine(m.error)}</span>}
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </section>
  );
}

function TrendMark({ env, name, verdict }: { env: string; name: string; verdict: TrendVerdict | undefined }) {
  if (!verdict) return null;
  const detail = `failed ${verdict.failures} of its last ${verdict.runs} run${verdict.runs === 1 ? '' : 's'} in ${env}`;
  return (
    <a class={`trend trend-${verdict.trend}`} data-trend={verdict.trend} href={testHref(env, name)} title={`${detail}: see its history`}>
      {TREND_TEXT[verdict.trend]}
      <span class="visually-hidden"> ({detail})</span>
    </a>
  );
}

/** Each failed member's trend, by member id, read once the set has ended (its failures are final then). */
function useTrends(env: string | undefined, failed: Member[]): Record<string, TrendVerdict> {
  const [trends, setTrends] = useState<Record<string, TrendVerdict>>({});
  const key = failed.map((m) => m.id).join(',');
  useEffect(() => {
    if (!env || failed.length === 0) return;
    let stopped = false;
    void (async () => {
      const todo = failed.slice(0, MAX_LOOKUPS);
      for (let i = 0; i < todo.length && !stopped; i += LOOKUPS_AT_ONCE) {
        const batch = todo.slice(i, i + LOOKUPS_AT_ONCE);
        const found = await Promise.all(batch.map((m) => trendOf(env, m)));
        if (!stopped) setTrends((before) => ({ ...before, ...Object.fromEntries(found.filter((f) => f !== undefined)) }));
      }
    })();
    return () => {
      stopped = true;
    };
  }, [env, key]);
  return trends;
}

async function trendOf(env: string, member: Member): Promise<[string, TrendVerdict] | undefined> {
  try {
    const history = await api.testHistory({ env, name: member.name, limit: HISTORY_RUNS });
    const run = { testRunId: member.id, result: 'FAIL', endedAt: member.endedAt, cancelled: false };
    return [member.id, failureTrend(run, history.runs)];
  } catch {
    // No history to judge by (an older server, a key without it): the test goes unmarked.
    return undefined;
  }
}
