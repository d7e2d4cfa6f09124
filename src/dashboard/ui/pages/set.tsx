/** `/sets/:id` — one set: status, counts, times, environment, overrides and members, live until it ends; "Run again". */
import { useState } from 'preact/hooks';
import type { TestRunSetDetails } from '../../../core/wire-dashboard.js';
import { api, setLoadError, type Member, type SetStatus } from '../api.js';
import { Alert, CountsBar, FlakyBadge, formatDuration, isFinal, QuarantinedBadge, RestartedBadge, shortId, SkippedBadge, spanMs, StatusBadge, Time } from '../components.js';
import { usePoll } from '../live.js';
import { navigate } from '../router.js';
import { Timeline } from '../timeline.js';
import { useMay } from '../access.js';
import { WebhookDeliveries } from '../webhooks.js';
import { Labels } from '../labels.js';
import { SelectionFacts } from '../selection.js';
import { FailureGroups } from '../failures.js';

export function SetPage({ id }: { id: string }) {
  const [status, setStatus] = useState<SetStatus | undefined>(undefined);
  const [details, setDetails] = useState<TestRunSetDetails | undefined>(undefined);
  const [members, setMembers] = useState<Member[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  const [rerunning, setRerunning] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const done = status !== undefined && isFinal(status.status);
  const may = useMay();

  usePoll(
    async () => {
      try {
        // Details change once more when the set ends (who cancelled it), while it is queued (its place) and until it runs
        // (a worker preparing it): read them again then.
        const ended = status !== undefined && isFinal(status.status);
        const fresh = !details || ended || details.queue !== null || details.phase === 'waiting' || details.phase === 'preparing';
        const [s, m, d] = await Promise.all([api.getSet(id), api.listMembers(id), fresh ? api.getDetails(id) : Promise.resolve(details)]);
        setStatus(s);
        setMembers(m);
        setDetails(d);
        setError(undefined);
      } catch (err) {
        setError(setLoadError(err));
        throw err;
      }
    },
    [id],
    !done,
  );

  const cancel = async () => {
    if (!window.confirm('Cancel this set? Its unfinished tests stop and end FAIL ("cancelled"), and so does the set.')) return;
    setCancelling(true);
    try {
      const result = await api.cancel(id);
      setStatus(result);
      setMembers(await api.listMembers(id));
      setDetails(await api.getDetails(id));
    } catch (err) {
      setError(`Could not cancel it: ${(err as Error).message}`);
    } finally {
      setCancelling(false);
    }
  };

  const runAgain = async () => {
    setRerunning(true);
    try {
      const created = await api.rerun(id);
      navigate(`/sets/${created.testRunSetId}`);
    } catch (err) {
      setError(`Could not run it again: ${(err as Error).message}`);
    } finally {
      setRerunning(false);
    }
  };

  return (
    <>
      <p class="crumbs">
        <a href="/">Sets</a> / <span class="mono">{shortId(id)}</span>
      </p>
      <div class="page-head">
        <h1 tabIndex={-1}>
          Set <span class="mono">{shortId(id)}</span>
        </h1>
        <div class="actions">
          {status && !done && may('cancelTestRunSet') && (
            <button type="button" class="danger" onClick={() => void cancel()} disabled={cancelling}>
              {cancelling ? 'Cancelling…' : 'Cancel set'}
            </button>
          )}
          {may('rerunTestRunSet') && (
            <button type="button" class="primary" onClick={() => void runAgain()} disabled={rerunning || !details}>
              {rerunning ? 'Starting…' : 'Run again'}
            </button>
          )}
        </div>
      </div>
      {error && <Alert>{error}</Alert>}
      {status && (
        <section aria-label="Status">
          <p class="set-status" aria-live="polite">
            <StatusBadge status={status.status} /> <CountsBar counts={status.progress.counts} />
            {details?.phase === 'ended' && <RuleNote status={status.status} counts={status.progress.counts} failing={details.failing} />}
          </p>
          <dl class="facts">
            <dt>Id</dt>
            <dd class="mono">{status.id}</dd>
            <dt>Environment</dt>
            <dd>{details ? <a href={`/environments/${encodeURIComponent(details.env)}`}>{details.env}</a> : '…'}</dd>
            {details && <Labels labels={details.labels} />}
            {details && <SelectionFacts select={details.select} />}
            <dt>Suite</dt>
            <dd>
              {!details ? '…' : details.suite ? (
                <a href="/suites" class="mono" title={details.suite.id} data-suite={details.suite.id}>
                  {details.suite.id.slice(0, 12)}
                  {details.suite.names.length > 0 && ` (${details.suite.names.join(', ')})`}
                  {details.suite.commit && ` · commit ${details.suite.commit.slice(0, 12)}`}
                </a>
              ) : (
                <span class="muted">the server's own tests</span>
              )}
            </dd>
            <dt>Created</dt>
            <dd><Time iso={status.createdAt} /></dd>
            <dt>Started</dt>
            <dd><Time iso={status.startedAt} /></dd>
            <dt>Ended</dt>
            <dd><Time iso={status.endedAt} /></dd>
            <dt>Duration</dt>
            <dd>{formatDuration(spanMs(status.startedAt, status.endedAt))}</dd>
            {details?.queue && <QueueFacts queue={details.queue} env={details.env} />}
            {details?.phase === 'preparing' && status.status === 'WAITING' && <PreparingFacts held={details.held} />}
            {details?.cancellation && (
              <>
                <dt>Cancelled</dt>
                <dd data-cancelled>
                  {details.cancellation.byKeyName ? `by key ${details.cancellation.byKeyName}` : details.cancellation.error.replace(/^cancelled: /, 'fail fast: ')},{' '}
                  <Time iso={details.cancellation.at} />
                </dd>
              </>
            )}
            {details?.maxFailures != null && (
              <>
                <dt>Fail fast</dt>
                <dd>after {details.maxFailures} failure{details.maxFailures === 1 ? '' : 's'}</dd>
              </>
            )}
          </dl>
        </section>
      )}
      {details && <Overrides details={details} />}
      <FailureGroups setId={id} env={details?.env} members={members} ended={done} />
      <h2>Timeline</h2>
      <Timeline setId={id} members={members} now={Date.now()} />
      <h2>Members</h2>
      <MembersTable setId={id} members={members} />
      <h2>Webhooks</h2>
      <WebhookDeliveries setId={id} setEnded={done} />
    </>
  );
}

/** A set whose members a worker holds before any began: it is getting them ready (the suite version, its dependencies, the test process). */
function PreparingFacts({ held }: { held: TestRunSetDetails['held'] }) {
  const members = held.reduce((sum, h) => sum + h.members, 0);
  return (
    <>
      <dt>Phase</dt>
      <dd data-phase="preparing">
        preparing: {held.length === 1 ? `worker ${held[0]?.workerId ?? ''}` : `${held.length} workers`} hold{held.length === 1 ? 's' : ''} {members} member{members === 1 ? '' : 's'}{' '}
        (fetching the suite version and installing its dependencies, starting the test process); they start when their tests begin
      </dd>
    </>
  );
}

/** A queued set: how many sets must end before it starts, and which sets hold its environment's places. */
function QueueFacts({ queue, env }: { queue: NonNullable<TestRunSetDetails['queue']>; env: string }) {
  return (
    <>
      <dt>Queued</dt>
      <dd data-queue={queue.ahead}>
        {queue.ahead === 1 ? 'next' : `${queue.ahead} sets ahead`}: {env} runs {queue.limit} set{queue.limit === 1 ? '' : 's'} at a time; waiting for{' '}
        {queue.holders.map((holder, i) => (
          <span key={holder}>
            {i > 0 && ', '}
            <a class="mono" href={`/sets/${holder}`}>{shortId(holder)}</a>
          </span>
        ))}
      </dd>
    </>
  );
}

function Overrides({ details }: { details: TestRunSetDetails }) {
  if (details.overrides.length === 0) return <p class="muted">No overrides: the environment's own values were used.</p>;
  return (
    <>
      <h2>Overrides</h2>
      <table class="overrides">
        <thead>
          <tr>
            <th scope="col">Variable</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {details.overrides.map((o) => (
            <tr key={o.name}>
              <td class="mono">{o.name}</td>
              <td class="mono">{o.secret ? <span title="secret: never shown">{o.value}</span> : o.value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function MembersTable({ setId, members }: { setId: string; members: Member[] }) {
  if (members.length === 0) return <p class="muted">Loading…</p>;
  return (
    <table class="stack members-table">
      <thead>
        <tr>
          <th scope="col">Test</th>
          <th scope="col">Status</th>
          <th scope="col">Duration</th>
          <th scope="col">Attempts</th>
          <th scope="col">Error</th>
        </tr>
      </thead>
      <tbody>
        {members.map((m) => (
          <tr key={m.id} data-member={m.name}>
            <td data-label="Test">
              <a href={`/sets/${setId}/runs/${m.id}`}>{m.name}</a> <span class="muted">{m.type}</span>
              {m.flaky && <FlakyBadge />}
              <RestartedBadge member={m} />
            </td>
            <td data-label="Status">
              <StatusBadge status={m.status} />
              {m.skipped && <SkippedBadge />}
              {m.quarantined && <QuarantinedBadge />}
            </td>
            <td data-label="Duration">{formatDuration(m.durationMs ?? (m.status === 'RUNNING' ? spanMs(m.startedAt, null) : null))}</td>
            <td data-label="Attempts">{m.attempts}</td>
            <td data-label="Error" class="error-cell">
              {m.error ?? <span class="muted">—</span>}
              {m.cancelledBy && <span class="muted"> by key {m.cancelledBy.keyName}</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Where the server's status rule parted from the seed's (any FAIL fails the
 * set), so a pass is never misread. Read from what the server counted, not
 * worked out again here: the ends that fail the set (`failing`) beside the
 * counts. A SUCCESS with members in FAIL had them all quarantined; a FAIL with
 * none failed on passes after a retry (the environment's failOnFlaky).
 */
function RuleNote({ status, counts, failing }: { status: string; counts: SetStatus['progress']['counts']; failing: number }) {
  const tests = (n: number) => `${n} test${n === 1 ? '' : 's'}`;
  if (status === 'SUCCESS' && counts.FAIL > 0) return <span class="rule-note" data-rule="quarantine"> — {tests(counts.FAIL)} quarantined failed</span>;
  if (status === 'FAIL' && counts.FAIL === 0 && failing > 0) return <span class="rule-note" data-rule="flaky"> — {tests(failing)} passed only after a retry (failOnFlaky)</span>;
  return null;
}
