/**
 * A set's members as bars on a time axis, one lane per worker slot (layout in
 * ../timeline-layout.ts). Each bar is a link to its member, says its status in
 * text (a mark and the name) as well as colour, and stays a bar — never a table
 * row per pixel — so 500 members remain readable: narrow bars keep their
 * colour, mark and hover text; the wide ones (the long poles) show their names.
 *
 * It is a picture for the eye and the mouse: the bars are out of the tab order
 * and hidden from screen readers, which get the caption's summary and the
 * members table below (the same members, the same links) instead of 500 more
 * stops before it.
 */
import { layoutTimeline, timeTicks, type TimelineBar, type TimelineLane } from '../timeline-layout.js';
import type { Member } from './api.js';
import { formatDuration, MARKS, type State } from './components.js';

/** Room per bar when a lane is crowded: the track scrolls sideways rather than squeezing bars to nothing. */
const REM_PER_BAR = 0.6;
/** Below this width (a phone) the track scrolls sideways, so ticks and names stay legible. */
const MIN_TRACK_REM = 36;

export function Timeline({ setId, members, now }: { setId: string; members: Member[]; now: number }) {
  const layout = layoutTimeline(members, now);
  if (layout.lanes.length === 0) return <p class="muted">Nothing has started yet.</p>;
  const pct = (ms: number) => (layout.span > 0 ? (ms / layout.span) * 100 : 0);
  const crowded = Math.max(...layout.lanes.map((lane) => lane.bars.length));
  const workers = new Set(layout.lanes.map((lane) => lane.worker)).size;
  return (
    <figure class="timeline">
      <figcaption class="muted">
        {layout.lanes.reduce((n, lane) => n + lane.bars.length, 0)} members on {layout.lanes.length} slots of {workers} worker
        {workers === 1 ? '' : 's'} over {formatDuration(layout.span)}
        {layout.notStarted > 0 ? `; ${layout.notStarted} not started` : ''}. Marks: {MARKS.SUCCESS} passed, {MARKS.FAIL} failed,{' '}
        {MARKS.RUNNING} running. Each bar links to its member, as the table below does.
      </figcaption>
      <div class="timeline-scroll" aria-hidden="true">
        <div class="timeline-body" style={{ minWidth: `${Math.max(MIN_TRACK_REM, crowded * REM_PER_BAR + 9).toFixed(1)}rem` }}>
          <div class="timeline-axis">
            {timeTicks(layout.span).map((t) => (
              <span key={t} style={{ left: `${pct(t)}%` }}>
                {tickLabel(t)}
              </span>
            ))}
          </div>
          {layout.lanes.map((lane) => (
            <div class="timeline-lane" key={`${lane.worker ?? '?'}#${lane.slot}`} title={laneName(lane)}>
              <span class="timeline-lane-label mono" title={lane.worker ?? 'worker not recorded'}>
                {shortWorker(lane.worker)} · {lane.slot + 1}
              </span>
              <div class="timeline-track">
                {lane.bars.map((bar) => (
                  <Bar key={bar.member.id} setId={setId} bar={bar} left={pct(bar.from)} width={pct(bar.to - bar.from)} />
                ))}
              </div>
            </div>
          ))}
        </div>
      </div>
    </figure>
  );
}

function Bar({ setId, bar, left, width }: { setId: string; bar: TimelineBar; left: number; width: number }) {
  const status = bar.member.status as State;
  const mark = MARKS[status] ?? '?';
  const text = `${bar.member.name}: ${status}${bar.open ? ' (running)' : ''}, ${formatDuration(bar.to - bar.from)}, from ${formatDuration(bar.from)}`;
  return (
    <a
      class={`tl-bar tl-${status.toLowerCase()}${bar.open ? ' tl-open' : ''}`}
      href={`/sets/${setId}/runs/${bar.member.id}`}
      style={{ left: `${left}%`, width: `${width}%` }}
      title={text}
      tabIndex={-1}
      data-member={bar.member.name}
    >
      {mark} {bar.member.name}
    </a>
  );
}

/** Axis labels: short, and whole where the step is (2 s, not 2.0 s). */
function tickLabel(ms: number): string {
  if (ms === 0) return '0';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))} s`;
  const s = Math.round((ms % 60_000) / 1000);
  return `${Math.floor(ms / 60_000)} min${s > 0 ? ` ${s} s` : ''}`;
}

function laneName(lane: TimelineLane): string {
  return `${lane.worker ?? 'unknown worker'}, slot ${lane.slot + 1}`;
}

/** Worker ids are host/pid/random: the host and pid say enough in a narrow label (the full id is its title). */
function shortWorker(worker: string | null): string {
  if (worker === null) return '?';
  const [host, pid] = worker.split('/');
  return pid ? `${host!.slice(0, 16)}/${pid}` : worker.slice(0, 20);
}
