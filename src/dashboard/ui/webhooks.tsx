/**
 * A set's webhook deliveries on its page: each webhook and event, its state,
 * and every attempt (status code or error, time). Polled while the set runs
 * an event of it waits to be fanned out, or a delivery is still pending.
 */
import { useState } from 'preact/hooks';
import type { WebhookDeliveryList } from '../../core/wire-webhooks.js';
import { api } from './api.js';
import { Time } from './components.js';
import { usePoll } from './live.js';

export function WebhookDeliveries({ setId, setEnded }: { setId: string; setEnded: boolean }) {
  const [list, setList] = useState<WebhookDeliveryList | undefined>(undefined);
  const deliveries = list?.deliveries;
  // A set's end becomes deliveries a moment after it ends: poll until none of its events wait.
  const settled = setEnded && list !== undefined && list.eventsWaiting === 0 && list.deliveries.every((d) => d.state !== 'pending');
  usePoll(
    async () => {
      setList(await api.listWebhookDeliveries(setId));
    },
    [setId],
    !settled,
  );
  if (deliveries === undefined) return null;
  if (deliveries.length === 0) return <p class="muted">No webhook deliveries{setEnded ? '' : ' yet'}.</p>;
  return (
    <table class="stack webhooks-table">
      <thead>
        <tr>
          <th scope="col">Webhook</th>
          <th scope="col">Event</th>
          <th scope="col">State</th>
          <th scope="col">Attempts</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr key={d.id} data-delivery={`${d.webhook} ${d.event}`}>
            <td data-label="Webhook" class="mono">{d.webhook}</td>
            <td data-label="Event" class="mono">{d.event}</td>
            <td data-label="State">
              <span class={`delivery-${d.state}`}>{d.state}</span>
              {d.state === 'pending' && d.nextAttemptAt && (
                <span class="muted">
                  {' '}
                  · next <Time iso={d.nextAttemptAt} />
                </span>
              )}
            </td>
            <td data-label="Attempts">
              {d.attempts.length === 0 ? (
                <span class="muted">none yet</span>
              ) : (
                <ol class="attempts">
                  {d.attempts.map((a) => (
                    <li key={a.n}>
                      <span class="mono">{a.statusCode ?? '—'}</span> {a.error && <span class="error-cell">{a.error}</span>} <span class="muted">({a.durationMs} ms,</span>{' '}
                      <Time iso={a.at} />
                      <span class="muted">)</span>
                    </li>
                  ))}
                </ol>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
