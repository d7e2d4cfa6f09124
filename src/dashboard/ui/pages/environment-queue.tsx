/**
 * An environment's unfinished sets on its page: those running, and those
 * waiting (queued past its maxConcurrentSets, with their place, or waiting for
 * a free worker), oldest first: the queue's own order.
 */
import { useEffect, useState } from 'preact/hooks';
import type { TestRunSetSummary } from '../../../core/wire-dashboard.js';
import { api } from '../api.js';
import { Alert, shortId, StatusBadge, Time } from '../components.js';

/** At most this many of each status are shown. */
const SHOWN = 50;

interface Unfinished {
  set: TestRunSetSummary;
  /** Sets that must end before it starts; null when it is not queued. */
  ahead: number | null;
}

async function unfinishedSets(env: string): Promise<Unfinished[]> {
  const [running, waiting] = await Promise.all(['RUNNING', 'WAITING'].map(async (status) => (await api.listSets({ env, status, limit: SHOWN })).testRunSets));
  const sets = [...running!, ...waiting!].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return Promise.all(sets.map(async (set) => ({ set, ahead: set.status === 'WAITING' ? ((await api.getDetails(set.id)).queue?.ahead ?? null) : null })));
}

export function EnvironmentQueue({ env }: { env: string }) {
  const [sets, setSets] = useState<Unfinished[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    unfinishedSets(env).then(setSets, (err: Error) => setError(err.message));
  }, [env]);
  if (error) return <Alert>Could not load its running and queued sets: {error}</Alert>;
  if (sets === undefined) return null;
  return (
    <>
      <h2>Running and queued</h2>
      {sets.length === 0 ? (
        <p class="muted">No set of {env} is running or waiting.</p>
      ) : (
        <table class="stack" data-unfinished={sets.length}>
          <thead>
            <tr>
              <th scope="col">Set</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Place</th>
            </tr>
          </thead>
          <tbody>
            {sets.map(({ set, ahead }) => (
              <tr key={set.id} data-set={set.id} data-queue={ahead ?? undefined}>
                <td data-label="Set">
                  <a class="mono" href={`/sets/${set.id}`}>{shortId(set.id)}</a>
                </td>
                <td data-label="Status">
                  <StatusBadge status={set.status} />
                </td>
                <td data-label="Created">
                  <Time iso={set.createdAt} />
                </td>
                <td data-label="Place">{set.status === 'RUNNING' ? 'running' : ahead === null ? 'waiting for a worker' : ahead === 1 ? 'queued, next' : `queued, ${ahead} sets ahead`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
