/**
 * A test's quarantine on its page: whether it is quarantined in this
 * environment (why, by whom, until when), and, for a key that may, a form to
 * quarantine it (reason, days) or a button to end it. A quarantined test still
 * runs; its failure does not fail the sets created while it is quarantined.
 */
import { useEffect, useState } from 'preact/hooks';
import type { QuarantineEntryView } from '../../core/wire-quarantine.js';
import { QUARANTINE_DAYS } from '../../core/quarantine.js';
import { useMay } from './access.js';
import { api } from './api.js';
import { Alert, Time } from './components.js';

const DAY_MS = 86_400_000;

export function QuarantineSection({ env, name }: { env: string; name: string }) {
  const may = useMay();
  const [entry, setEntry] = useState<QuarantineEntryView | null | undefined>(undefined);
  const [reason, setReason] = useState('');
  const [days, setDays] = useState(String(QUARANTINE_DAYS.default));
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  async function load() {
    const entries = await api.listQuarantine(env);
    setEntry(entries.find((e) => e.name === name) ?? null);
  }
  useEffect(() => {
    load().catch((err: Error) => setError(err.message));
  }, [env, name]);

  async function act(work: () => Promise<unknown>) {
    setBusy(true);
    setError(undefined);
    try {
      await work();
      await load();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }
  const add = (event: Event) => {
    event.preventDefault();
    const until = new Date(Date.now() + Number(days) * DAY_MS).toISOString();
    void act(() => api.addQuarantine({ env, name, reason: reason.trim(), until }));
  };
  const end = () => void act(() => api.removeQuarantine(env, name));

  return (
    <section aria-label="Quarantine" data-quarantine={entry ? 'on' : 'off'}>
      <h2>Quarantine</h2>
      {error && <Alert>{error}</Alert>}
      {entry === undefined ? (
        !error && <p class="muted">Loading…</p>
      ) : entry ? (
        <>
          <p>
            <span class="quarantined">quarantined</span> until <Time iso={entry.until} />
            {entry.createdBy && <span class="muted"> · by key {entry.createdBy.keyName}</span>}: {entry.reason}
          </p>
          <p class="muted">It still runs; its failures do not fail the sets created while it is quarantined.</p>
          {may('removeQuarantine') && (
            <button type="button" onClick={end} disabled={busy}>
              End quarantine
            </button>
          )}
        </>
      ) : (
        <>
          <p class="muted">Not quarantined: its failures fail its sets.</p>
          {may('addQuarantine') && (
            <form class="quarantine-form" onSubmit={add}>
              <label>
                Reason <input required maxLength={500} value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
              </label>
              <label>
                Days <input type="number" required min={1} max={QUARANTINE_DAYS.max} value={days} onInput={(e) => setDays((e.target as HTMLInputElement).value)} />
              </label>
              <button type="submit" disabled={busy || reason.trim() === ''}>
                Quarantine
              </button>
            </form>
          )}
        </>
      )}
    </section>
  );
}
