/** Small pieces shared by the pages: status, flaky, restarted, skipped and quarantined badges, the counts bar, times and durations. */
import type { ComponentChildren } from 'preact';
import { isFinal, RUN_STATES as STATES, type Counts, type RunState as State } from '../../core/states.js';
import { passedHow, ranAgainText, wasRestarted, type RunsOfMember } from '../../core/starts.js';

// The states and their rules come from core (it imports nothing, so it bundles as is).
export { isFinal, STATES, type Counts, type State };

const LABELS: Record<State, string> = { WAITING: 'Waiting', RUNNING: 'Running', SUCCESS: 'Passed', FAIL: 'Failed' };
/** A mark beside the colour, so status never depends on colour alone. */
export const MARKS: Record<State, string> = { WAITING: '○', RUNNING: '◐', SUCCESS: '✓', FAIL: '✗' };

export function StatusBadge({ status }: { status: State }) {
  return (
    <span class={`badge badge-${status.toLowerCase()}`} data-status={status}>
      <span aria-hidden="true">{MARKS[status]} </span>
      {status}
      <span class="visually-hidden"> ({LABELS[status]})</span>
    </span>
  );
}

/** Marks a member that passed only after a retry. */
export function FlakyBadge() {
  return (
    <span class="flaky" title="Passed only after a retry">
      flaky
    </span>
  );
}

/**
 * Marks a member started more than once because a start of it was lost (its
 * lease expired, or its worker gave it back): at-least-once made visible. Its
 * words are the client's (ranAgainText): a pass after a lost lease is told
 * apart from a pass on retry (flaky).
 */
export function RestartedBadge({ member }: { member: RunsOfMember }) {
  if (!wasRestarted(member)) return null;
  const how = passedHow(member);
  const label = how === 'after a lost lease' || how === 'after a lost worker' ? `passed ${how}` : `started ${member.starts ?? 1}×`;
  return (
    <span class="restarted" title={ranAgainText(member) ?? ''}>
      {label}
    </span>
  );
}

/** Marks a member that passed because Playwright skipped it: SUCCESS by the seed's states, yet nothing of it ran. */
export function SkippedBadge() {
  return (
    <span class="skipped" title="Skipped by Playwright (test.skip, test.fixme): it did not run">
      skipped
    </span>
  );
}

/** Marks a member whose test was quarantined when its set was created: its failure did not fail the set. */
export function QuarantinedBadge() {
  return (
    <span class="quarantined" title="Quarantined: it ran, but its failure does not fail the set">
      quarantined
    </span>
  );
}

export function countsSummary(counts: Counts): string {
  const total = STATES.reduce((n, s) => n + counts[s], 0);
  return `${counts.SUCCESS + counts.FAIL} of ${total} ended: ${counts.SUCCESS} passed, ${counts.FAIL} failed, ${counts.RUNNING} running, ${counts.WAITING} waiting`;
}

export function CountsBar({ counts }: { counts: Counts }) {
  return (
    <div class="counts">
      <div class="counts-bar" role="img" aria-label={countsSummary(counts)}>
        {STATES.map((s) => (counts[s] > 0 ? <span key={s} class={`seg seg-${s.toLowerCase()}`} style={{ flexGrow: counts[s] }} /> : null))}
      </div>
      <span class="counts-legend" aria-hidden="true">
        {STATES.map((s) => (
          <span key={s} class={`legend-${s.toLowerCase()}`} title={LABELS[s]}>
            {MARKS[s]} {counts[s]}
          </span>
        ))}
      </span>
    </div>
  );
}

export function Time({ iso }: { iso: string | null }) {
  if (!iso) return <span class="muted">—</span>;
  const date = new Date(iso);
  return (
    <time dateTime={iso} title={iso}>
      {date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })}
    </time>
  );
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** From start to end, or to now while still running. */
export function spanMs(startedAt: string | null, endedAt: string | null): number | null {
  if (!startedAt) return null;
  return (endedAt ? Date.parse(endedAt) : Date.now()) - Date.parse(startedAt);
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}

export function Alert({ children }: { children: ComponentChildren }) {
  return (
    <div class="alert" role="alert">
      {children}
    </div>
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The environment filter of a list page. Re-created when the names arrive, so
 * the filter from the URL is selected once its option exists; a name the list
 * lacks (a stale link) stays selectable rather than silently switching.
 */
export function EnvSelect({ names, value, onChange, anyLabel }: { names: string[]; value: string; onChange: (env: string) => void; anyLabel?: string }) {
  return (
    <label>
      Environment
      <select key={names.join('\n')} name="env" value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {anyLabel !== undefined && <option value="">{anyLabel}</option>}
        {(value && !names.includes(value) ? [...names, value] : names).map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </label>
  );
}
