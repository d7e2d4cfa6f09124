/** `/test?env=&name=` — one test in one environment: its quarantine, its duration over time as a chart, its recent failures, its runs. */
import { useEffect, useState } from 'preact/hooks';
import { firstLine } from '../../failure-groups.js';
import { passedAfterRetry } from '../../../core/states.js';
import { api, type TestHistoryRun } from '../api.js';
import { Chart, type Shape } from '../chart.js';
import { Alert, formatDuration, shortId, Time } from '../components.js';
import { QuarantineSection } from '../quarantine.js';

/** Runs read: pages of the history, newest first, up to this many. */
const MAX_RUNS = 200;
const RECENT_FAILURES = 10;

type Kind = 'pass' | 'flaky' | 'fail';
const SHAPE: Record<Kind, Shape> = { pass: 'circle', flaky: 'triangle', fail: 'cross' };
const SAID: Record<Kind, string> = { pass: 'passed', flaky: 'passed after a retry', fail: 'failed' };
const PAGE = 100;

function kindOf(run: TestHistoryRun): Kind {
  return run.result !== 'SUCCESS' ? 'fail' : passedAfterRetry(run.result, run.attempts) ? 'flaky' : 'pass';
}

export function TestPage({ search }: { search: URLSearchParams }) {
  const env = search.get('env') ?? '';
  const name = search.get('name') ?? '';
  const [runs, setRuns] = useState<TestHistoryRun[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    void (async () => {
      try {
        const found: TestHistoryRun[] = [];
        let cursor: string | undefined;
        do {
          const page = await api.testHistory({ env, name, cursor, limit: PAGE });
          found.push(...page.runs);
          cursor = page.nextCursor ?? undefined;
        } while (cursor !== undefined && found.length < MAX_RUNS);
        setRuns(found.slice(0, MAX_RUNS));
      } catch (err) {
        setError((err as Error).message);
      }
    })();
  }, [env, name]);

  const failures = (runs ?? []).filter((r) => r.result === 'FAIL' && !r.cancelled).slice(0, RECENT_FAILURES);
  return (
    <>
      <p class="crumbs">
        <a href={`/tests?env=${encodeURIComponent(env)}`}>Tests in {env}</a> / {name}
      </p>
      <h1 tabIndex={-1}>{name}</h1>
      <QuarantineSection env={env} name={name} />
      {error && <Alert>Could not load its history: {error}</Alert>}
      {runs === undefined ? (
        !error && <p class="muted">Loading…</p>
      ) : runs.length === 0 ? (
        <p class="empty">It has not run in {env} yet.</p>
      ) : (
        <>
          <h2>Duration over time</h2>
          <DurationChart env={env} runs={runs} />
          <h2>Recent failures</h2>
          {failures.length === 0 ? (
            <p class="muted">No failure in its last {runs.length} runs.</p>
          ) : (
            <ul class="recent-failures">
              {failures.map((r) => (
                <li key={r.testRunId} data-run={r.testRunId}>
                  <a href={`/sets/${r.setId}/runs/${r.testRunId}`}>
                    <Time iso={r.endedAt} />
                  </a>{' '}
                  <span class="muted">
                    in set <a href={`/sets/${r.setId}`} class="mono">{shortId(r.setId)}</a>
                  </span>
                  <pre class="error-text">{firstLine(r.error)}</pre>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </>
  );
}

function DurationChart({ env, runs }: { env: string; runs: TestHistoryRun[] }) {
  // A cancelled run's duration is where the cancel cut it, not the test's: left out, as the Tests page's figures leave it.
  const timed = runs.filter((r) => r.durationMs !== null && !r.cancelled).reverse();
  if (timed.length === 0) return <p class="muted">No run has a duration yet.</p>;
  const sorted = timed.map((r) => r.durationMs!).sort((a, b) => a - b);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  const first = timed[0]!;
  const last = timed[timed.length - 1]!;
  const day = (r: TestHistoryRun) => new Date(r.endedAt).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' });
  const count = (kind: Kind) => timed.filter((r) => kindOf(r) === kind).length;
  const summary =
    `${timed.length} run${timed.length === 1 ? '' : 's'} in ${env} from ${day(first)} to ${day(last)}: median ${formatDuration(median)}, ` +
    `fastest ${formatDuration(sorted[0]!)}, slowest ${formatDuration(sorted[sorted.length - 1]!)}; ` +
    `${count('pass')} passed, ${count('flaky')} passed after a retry, ${count('fail')} failed. The newest took ${formatDuration(last.durationMs)} and ${SAID[kindOf(last)]}.`;
  return (
    <Chart
      id="duration"
      title={`Duration of each run in ${env}`}
      summary={summary}
      series={[
        {
          name: 'duration',
          points: timed.map((r) => ({
            x: Date.parse(r.endedAt),
            y: r.durationMs!,
            shape: SHAPE[kindOf(r)],
            label: `${day(r)}: ${formatDuration(r.durationMs)}, ${SAID[kindOf(r)]}`,
          })),
        },
      ]}
      yFormat={formatDuration}
      xRange={[
        { x: Date.parse(first.endedAt), text: day(first) },
        { x: Date.parse(last.endedAt), text: day(last) },
      ]}
      shapes={{ circle: 'passed', triangle: 'passed after a retry', cross: 'failed' }}
    >
      <table>
        <thead>
          <tr>
            <th scope="col">Ended</th>
            <th scope="col">Result</th>
            <th scope="col">Attempts</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {[...timed].reverse().map((r) => (
            <tr key={r.testRunId}>
              <td>
                <a href={`/sets/${r.setId}/runs/${r.testRunId}`}>
                  <Time iso={r.endedAt} />
                </a>
              </td>
              <td>{SAID[kindOf(r)]}</td>
              <td>{r.attempts}</td>
              <td>{formatDuration(r.durationMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Chart>
  );
}
