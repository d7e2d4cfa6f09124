/**
 * `/tests?env=&name=&sort=&dir=` — an environment's tests: the strip of each
 * one's last 30 outcomes, pass and flaky rates, durations and last failure,
 * sortable by any column; environment, name filter and sort are kept in the URL.
 */
import { useEffect, useState } from 'preact/hooks';
import { SORT_KEYS, sortTests, type SortDir, type SortKey } from '../../test-table.js';
import { api, type TestSummary } from '../api.js';
import { Alert, EnvSelect, formatDuration, Time } from '../components.js';
import { navigate, testHref } from '../router.js';
import { OutcomeStrip } from '../strip.js';

/** Pages of tests read at most: the table sorts what it holds, so it reads them all up to here. */
const PAGE = 100;
const MAX_PAGES = 20;

const COLUMNS: { key: SortKey; label: string; first: SortDir }[] = [
  { key: 'name', label: 'Test', first: 'asc' },
  { key: 'runs', label: 'Runs', first: 'desc' },
  { key: 'passRate', label: 'Pass rate', first: 'asc' },
  { key: 'flakyRate', label: 'Flaky rate', first: 'desc' },
  { key: 'restartRate', label: 'Restart rate', first: 'desc' },
  { key: 'median', label: 'Median', first: 'desc' },
  { key: 'p95', label: 'p95', first: 'desc' },
  { key: 'lastFailure', label: 'Last failure', first: 'desc' },
];

function rate(r: number | null): string {
  return r === null ? '—' : `${Math.round(r * 100)}%`;
}

export function TestsPage({ search }: { search: URLSearchParams }) {
  const env = search.get('env') ?? '';
  const name = search.get('name') ?? '';
  const sort = (SORT_KEYS as readonly string[]).includes(search.get('sort') ?? '') ? (search.get('sort') as SortKey) : 'name';
  const dir: SortDir = search.get('dir') === 'desc' ? 'desc' : 'asc';
  const [envNames, setEnvNames] = useState<string[]>([]);
  const [tests, setTests] = useState<{ list: TestSummary[]; complete: boolean } | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);

  const setParams = (changes: Record<string, string>) => {
    const next = new URLSearchParams(search);
    for (const [k, v] of Object.entries(changes)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    navigate(`/tests?${next.toString()}`, true);
  };

  useEffect(() => {
    api.environments().then((list) => {
      setEnvNames(list.map((e) => e.name));
      // The API answers for one environment: start with the first.
      if (!env && list[0]) setParams({ env: list[0].name });
    }, (err: Error) => setError(err.message));
  }, []);

  useEffect(() => {
    if (!env) return;
    let stopped = false;
    setTests(undefined);
    void (async () => {
      try {
        const list: TestSummary[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_PAGES; page++) {
          const found = await api.listTests({ env, name: name || undefined, cursor, limit: PAGE });
          list.push(...found.tests);
          cursor = found.nextCursor ?? undefined;
          if (cursor === undefined) break;
        }
        if (!stopped) setTests({ list, complete: cursor === undefined });
      } catch (err) {
        if (!stopped) setError((err as Error).message);
      }
    })();
    return () => {
      stopped = true;
    };
  }, [env, name]);

  return (
    <>
      <h1 tabIndex={-1}>Tests</h1>
      <form class="filters" role="search" aria-label="Filter tests" onSubmit={(e) => e.preventDefault()}>
        <EnvSelect names={envNames} value={env} onChange={(v) => setParams({ env: v })} />
        <label>
          Name contains
          <input name="name" type="search" value={name} onChange={(e) => setParams({ name: e.currentTarget.value.trim() })} />
        </label>
      </form>
      {env && (
        <p class="muted">
          <a href={`/environments/${encodeURIComponent(env)}`}>Environment {env}</a>: its pass rate per day and last sets.
        </p>
      )}
      {error && <Alert>Could not load the tests: {error}</Alert>}
      {tests === undefined ? (
        !error && <p class="muted">Loading…</p>
      ) : (
        <TestsTable env={env} tests={sortTests(tests.list, sort, dir)} sort={sort} dir={dir} onSort={(key, d) => setParams({ sort: key, dir: d })} filtered={Boolean(name)} />
      )}
      {tests && !tests.complete && <p class="muted">Only the first {tests.list.length} tests are shown: narrow the list by name.</p>}
    </>
  );
}

function TestsTable(props: { env: string; tests: TestSummary[]; sort: SortKey; dir: SortDir; onSort: (key: SortKey, dir: SortDir) => void; filtered: boolean }) {
  const { env, tests, sort, dir, onSort } = props;
  if (tests.length === 0) return <p class="empty">{props.filtered ? 'No test matches this name.' : `No test has run in ${env} yet.`}</p>;
  return (
    <table class="stack tests-table">
      <caption class="visually-hidden">
        Tests in {env}, sorted by {COLUMNS.find((c) => c.key === sort)!.label} ({dir === 'asc' ? 'ascending' : 'descending'})
      </caption>
      <thead>
        <tr>
          <th scope="col">Last 30, oldest first</th>
          {COLUMNS.map((c) => (
            <th key={c.key} scope="col" aria-sort={sort === c.key ? (dir === 'asc' ? 'ascending' : 'descending') : undefined} data-sort={c.key}>
              <button type="button" class="sort" onClick={() => onSort(c.key, sort === c.key ? (dir === 'asc' ? 'desc' : 'asc') : c.first)}>
                {c.label}
                <span aria-hidden="true">{sort === c.key ? (dir === 'asc' ? ' ▲' : ' ▼') : ''}</span>
              </button>
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {tests.map((t) => (
          <tr key={t.name} data-test={t.name}>
            <td data-label="Last 30">
              <OutcomeStrip outcomes={t.lastOutcomes} />
            </td>
            <td data-label="Test">
              <a href={testHref(env, t.name)}>{t.name}</a> <span class="muted">{t.type}</span>
            </td>
            <td data-label="Runs">{t.runs}</td>
            <td data-label="Pass rate">{rate(t.passRate)}</td>
            <td data-label="Flaky rate">{rate(t.flakyRate)}</td>
            <td data-label="Restart rate" title="Runs started again after a lost lease or worker: not flaky">
              {rate(t.restartRate)}
            </td>
            <td data-label="Median">{formatDuration(t.durationMs.median)}</td>
            <td data-label="p95">{formatDuration(t.durationMs.p95)}</td>
            <td data-label="Last failure">
              {t.lastFailure ? (
                <a href={`/sets/${t.lastFailure.setId}/runs/${t.lastFailure.testRunId}`} title={t.lastFailure.error ?? undefined}>
                  <Time iso={t.lastFailure.endedAt} />
                </a>
              ) : (
                <span class="muted">never</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
