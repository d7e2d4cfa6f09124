/** `/` — the sets, newest first, filtered by environment and status, a page at a time, updated live. */
import { useEffect, useState } from 'preact/hooks';
import type { TestRunSetSummary } from '../../../core/wire-dashboard.js';
import { api } from '../api.js';
import { Alert, CountsBar, EnvSelect, formatDuration, shortId, spanMs, STATES, StatusBadge, Time } from '../components.js';
import { usePoll } from '../live.js';
import { navigate } from '../router.js';

const PAGE_SIZE = 20;

export function SetsPage({ search }: { search: URLSearchParams }) {
  const env = search.get('env') ?? '';
  const status = search.get('status') ?? '';
  const label = search.get('label') ?? '';
  const [envNames, setEnvNames] = useState<string[]>([]);
  /** Cursors of the pages walked so far: the last one is the page shown ("" = the newest). */
  const [cursors, setCursors] = useState<string[]>(['']);
  const [sets, setSets] = useState<TestRunSetSummary[] | undefined>(undefined);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>(undefined);
  const cursor = cursors[cursors.length - 1] ?? '';

  useEffect(() => {
    api.environments().then((list) => setEnvNames(list.map((e) => e.name)), () => undefined);
  }, []);
  useEffect(() => setCursors(['']), [env, status, label]);

  usePoll(async () => {
    try {
      const page = await api.listSets({ env, status, label, cursor: cursor || undefined, limit: PAGE_SIZE });
      setSets(page.testRunSets);
      setNextCursor(page.nextCursor);
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
      throw err;
    }
  }, [env, status, label, cursor]);

  const setFilter = (name: 'env' | 'status' | 'label', value: string) => {
    const next = new URLSearchParams(search);
    if (value) next.set(name, value);
    else next.delete(name);
    const q = next.toString();
    navigate(q ? `/?${q}` : '/', true);
  };

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Test Run Sets</h1>
        <a class="button primary" href="/trigger">
          Run a set
        </a>
      </div>
      <form class="filters" role="search" aria-label="Filter sets" onSubmit={(e) => e.preventDefault()}>
        <EnvSelect names={envNames} value={env} onChange={(v) => setFilter('env', v)} anyLabel="All environments" />
        <label>
          Status
          <select name="status" value={status} onChange={(e) => setFilter('status', e.currentTarget.value)}>
            <option value="">Any status</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Label
          <input name="label" type="search" placeholder="branch:main" value={label} onChange={(e) => setFilter('label', e.currentTarget.value.trim())} />
        </label>
      </form>
      {error && <Alert>Could not load the sets: {error}</Alert>}
      {sets === undefined ? <p class="muted">Loading…</p> : <SetsTable sets={sets} filtered={Boolean(env || status || label)} />}
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          ← Newer
        </button>
        <span class="muted">Page {cursors.length}</span>
        <button type="button" disabled={!nextCursor} onClick={() => nextCursor && setCursors([...cursors, nextCursor])}>
          Older →
        </button>
      </nav>
    </>
  );
}

export function SetsTable({ sets, filtered }: { sets: TestRunSetSummary[]; filtered: boolean }) {
  if (sets.length === 0) {
    return <p class="empty">{filtered ? 'No set matches these filters.' : 'No sets yet.'} <a href="/trigger">Run a set</a>.</p>;
  }
  return (
    <table class="stack sets-table">
      <caption class="visually-hidden">Test Run Sets, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Status</th>
          <th scope="col">Set</th>
          <th scope="col">Environment</th>
          <th scope="col">Progress</th>
          <th scope="col">Created</th>
          <th scope="col">Duration</th>
        </tr>
      </thead>
      <tbody>
        {sets.map((set) => (
          <tr key={set.id} data-set-id={set.id}>
            <td data-label="Status">
              <StatusBadge status={set.status} />
            </td>
            <td data-label="Set">
              <a href={`/sets/${set.id}`} class="mono" aria-label={`Set ${set.id}`}>
                {shortId(set.id)}
              </a>
            </td>
            <td data-label="Environment">{set.env}</td>
            <td data-label="Progress">
              <CountsBar counts={set.progress.counts} />
            </td>
            <td data-label="Created">
              <Time iso={set.createdAt} />
            </td>
            <td data-label="Duration">{formatDuration(spanMs(set.startedAt, set.endedAt))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
