/** `/workers` — the live worker processes: slots, how busy, what each runs now; live while the page is open. */
import { useState } from 'preact/hooks';
import type { WorkerList } from '../../../core/wire-dashboard.js';
import { api } from '../api.js';
import { Alert, formatDuration, shortId, Time } from '../components.js';
import { usePoll } from '../live.js';

export function WorkersPage() {
  const [list, setList] = useState<WorkerList | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);

  usePoll(async () => {
    try {
      setList(await api.listWorkers());
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
      throw err;
    }
  }, []);

  const workers = list?.workers ?? [];
  const slots = workers.reduce((n, w) => n + w.slots, 0);
  const busy = workers.reduce((n, w) => n + w.running.length, 0);
  return (
    <>
      <h1 tabIndex={-1}>Workers</h1>
      {error && <Alert>{error}</Alert>}
      {list && (
        <p aria-live="polite">
          {workers.length} live worker{workers.length === 1 ? '' : 's'}, {busy} of {slots} slots busy. A worker silent for{' '}
          {formatDuration(list.staleAfterMs)} drops out, and its members run elsewhere.
        </p>
      )}
      {list && workers.length === 0 && (
        <p class="empty">
          No live workers: sets wait until one starts (<code>runset serve</code> or <code>runset worker</code>).
        </p>
      )}
      {workers.length > 0 && (
        <table class="stack workers-table">
          <thead>
            <tr>
              <th scope="col">Worker</th>
              <th scope="col">Host</th>
              <th scope="col">Busy</th>
              <th scope="col">Started</th>
              <th scope="col">Last heartbeat</th>
              <th scope="col">Running</th>
            </tr>
          </thead>
          <tbody>
            {workers.map((w) => (
              <tr key={w.id} data-worker={w.id}>
                <td data-label="Worker" class="mono">
                  {w.id}
                </td>
                <td data-label="Host">
                  {w.host} <span class="muted">pid {w.pid}</span>
                </td>
                <td data-label="Busy">
                  {w.running.length} of {w.slots}
                  {w.held > 0 && (
                    <span class="muted" title="claimed and not begun: being prepared (the suite version and its dependencies, the test process) or waiting their turn in a share">
                      {' '}
                      (+{w.held} held)
                    </span>
                  )}
                </td>
                <td data-label="Started">
                  <Time iso={w.startedAt} />
                </td>
                <td data-label="Last heartbeat">
                  <Time iso={w.heartbeatAt} />
                </td>
                <td data-label="Running">
                  {w.running.length === 0 ? (
                    <span class="muted">idle</span>
                  ) : (
                    <ul class="running-list">
                      {w.running.map((r) => (
                        <li key={r.runId}>
                          <a href={`/sets/${r.setId}/runs/${r.runId}`}>{r.name}</a>{' '}
                          <span class="muted">
                            {r.type} · set <span class="mono">{shortId(r.setId)}</span>
                          </span>
                        </li>
                      ))}
                    </ul>
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
