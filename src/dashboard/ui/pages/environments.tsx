/**
 * `/environments` — every environment with its latest set; `/environments/:env`
 * — one environment: its running and queued sets, its pass rate per day as a
 * chart, and its last sets.
 */
import { useEffect, useState } from 'preact/hooks';
import type { EnvironmentView, TestRunSetSummary } from '../../../core/wire-dashboard.js';
import { passRateByDay, percent, type DayRate } from '../../env-trend.js';
import { api } from '../api.js';
import { Chart } from '../chart.js';
import { Alert, StatusBadge, Time } from '../components.js';
import { SetsTable } from './sets.js';
import { EnvironmentQueue } from './environment-queue.js';

/** How far back the chart looks, and how many sets it reads at most to get there. */
const DAYS = 30;
const PAGE = 100;
const MAX_PAGES = 10;
const LAST_SETS = 10;

export function EnvironmentsPage() {
  const [envs, setEnvs] = useState<{ env: EnvironmentView; latest: TestRunSetSummary | null }[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    void (async () => {
      try {
        const list = await api.environments();
        setEnvs(await Promise.all(list.map(async (env) => ({ env, latest: (await api.listSets({ env: env.name, limit: 1 })).testRunSets[0] ?? null }))));
      } catch (err) {
        setError((err as Error).message);
      }
    })();
  }, []);
  return (
    <>
      <h1 tabIndex={-1}>Environments</h1>
      {error && <Alert>Could not load the environments: {error}</Alert>}
      {envs === undefined ? (
        !error && <p class="muted">Loading…</p>
      ) : (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Environment</th>
              <th scope="col">Tests</th>
              <th scope="col">Latest set</th>
            </tr>
          </thead>
          <tbody>
            {envs.map(({ env, latest }) => (
              <tr key={env.name} data-env={env.name}>
                <td data-label="Environment">
                  <a href={`/environments/${encodeURIComponent(env.name)}`}>{env.name}</a>
                </td>
                <td data-label="Tests">
                  <a href={`/tests?env=${encodeURIComponent(env.name)}`}>{env.tests}</a>
                </td>
                <td data-label="Latest set">
                  {latest ? (
                    <a href={`/sets/${latest.id}`}>
                      <StatusBadge status={latest.status} /> <Time iso={latest.createdAt} />
                    </a>
                  ) : (
                    <span class="muted">none yet</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

export function EnvironmentPage({ env }: { env: string }) {
  const [recent, setRecent] = useState<RecentSets | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    recentSets(env).then(setRecent, (err: Error) => setError(err.message));
  }, [env]);
  const q = encodeURIComponent(env);
  return (
    <>
      <p class="crumbs">
        <a href="/environments">Environments</a> / {env}
      </p>
      <div class="page-head">
        <h1 tabIndex={-1}>Environment {env}</h1>
        <div class="actions">
          <a class="button" href={`/tests?env=${q}`}>
            Its tests
          </a>
          <a class="button" href={`/?env=${q}`}>
            All its sets
          </a>
        </div>
      </div>
      <EnvironmentQueue env={env} />
      {error && <Alert>Could not load its sets: {error}</Alert>}
      {recent === undefined ? (
        !error && <p class="muted">Loading…</p>
      ) : (
        <>
          <h2>Pass rate per day</h2>
          <PassRateChart env={env} days={passRateByDay(recent.sets, localDay)} complete={recent.complete} />
          <h2>Last sets</h2>
          <SetsTable sets={recent.latest} filtered={false} />
        </>
      )}
    </>
  );
}

interface RecentSets {
  /** Of the last DAYS days, newest first. */
  sets: TestRunSetSummary[];
  /** The newest LAST_SETS, however old. */
  latest: TestRunSetSummary[];
  /** False when MAX_PAGES pages did not reach back DAYS days. */
  complete: boolean;
}

/** The environment's sets, read a page at a time (at most MAX_PAGES) back to DAYS days ago. */
async function recentSets(env: string): Promise<RecentSets> {
  const since = Date.now() - DAYS * 86_400_000;
  const sets: TestRunSetSummary[] = [];
  let latest: TestRunSetSummary[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const found = await api.listSets({ env, cursor, limit: PAGE });
    if (page === 0) latest = found.testRunSets.slice(0, LAST_SETS);
    const recent = found.testRunSets.filter((s) => Date.parse(s.createdAt) >= since);
    sets.push(...recent);
    if (found.nextCursor === null || recent.length < found.testRunSets.length) return { sets, latest, complete: true };
    cursor = found.nextCursor;
  }
  return { sets, latest, complete: false };
}

/** The viewer's calendar day of an instant, as YYYY-MM-DD. */
function localDay(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

function dayTime(day: string): number {
  return new Date(`${day}T00:00:00`).getTime();
}

function PassRateChart({ env, days, complete }: { env: string; days: DayRate[]; complete: boolean }) {
  if (days.length === 0) return <p class="muted">No set has ended in {env} in the last {DAYS} days.</p>;
  const sets = days.reduce((n, d) => n + d.sets, 0);
  const passed = days.reduce((n, d) => n + d.setsPassed, 0);
  const first = days[0]!;
  const last = days[days.length - 1]!;
  const said = (d: DayRate) => `${d.day}: ${d.setsPassed} of ${d.sets} sets passed (${percent(d.setsPassed, d.sets)}%), ${percent(d.testsPassed, d.tests)}% of their tests`;
  const summary =
    `${env}, ${days.length} day${days.length === 1 ? '' : 's'} with ended sets from ${first.day} to ${last.day}` +
    `${complete ? '' : ` (the newest ${sets} sets only)`}: ${passed} of ${sets} sets passed (${percent(passed, sets)}%). Last day: ${said(last)}.`;
  return (
    <Chart
      id="pass-rate"
      title={`Pass rate per day in ${env}`}
      summary={summary}
      series={[
        { name: 'sets passed', points: days.map((d) => ({ x: dayTime(d.day), y: percent(d.setsPassed, d.sets)!, shape: 'circle', label: said(d) })) },
        { name: 'tests passed', dashed: true, points: days.map((d) => ({ x: dayTime(d.day), y: percent(d.testsPassed, d.tests)!, shape: 'square', label: said(d) })) },
      ]}
      yTicks={[0, 25, 50, 75, 100]}
      yFormat={(v) => `${v}%`}
      xRange={[
        { x: dayTime(first.day), text: first.day },
        { x: dayTime(last.day), text: last.day },
      ]}
      shapes={{ circle: 'sets, % passed', square: 'tests, % passed' }}
    >
      <table>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Sets ended</th>
            <th scope="col">Sets passed</th>
            <th scope="col">Tests passed</th>
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr key={d.day}>
              <td>{d.day}</td>
              <td>{d.sets}</td>
              <td>
                {d.setsPassed} ({percent(d.setsPassed, d.sets)}%)
              </td>
              <td>
                {d.testsPassed} of {d.tests} ({percent(d.testsPassed, d.tests)}%)
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Chart>
  );
}
