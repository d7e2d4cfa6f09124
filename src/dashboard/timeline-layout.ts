/**
 * The set page's timeline, as data: which lane each member's bar goes in and
 * where the time axis ticks. Pure (no DOM, no imports), so the server's unit
 * tests check it and the page bundles it as is.
 *
 * Lanes: members carry the worker that ran them, not the slot. Within one
 * worker, bars are packed greedily by start time into the first lane that is
 * free (interval partitioning), which uses as few lanes as the overlap needs:
 * the worker's busy slots, never more.
 */

export interface TimelineMember {
  id: string;
  name: string;
  status: string;
  workerId?: string | null;
  startedAt: string | null;
  endedAt: string | null;
}

export interface TimelineBar {
  member: TimelineMember;
  /** Milliseconds from the timeline's start. */
  from: number;
  to: number;
  /** Still running: `to` is now. */
  open: boolean;
}

export interface TimelineLane {
  /** The worker's id, or null for members whose worker is not known. */
  worker: string | null;
  /** 0-based within the worker. */
  slot: number;
  bars: TimelineBar[];
}

export interface TimelineLayout {
  lanes: TimelineLane[];
  /** Epoch ms of the earliest start. */
  origin: number;
  /** Milliseconds from the earliest start to the latest end (or now). */
  span: number;
  /** Members not started yet: not drawn. */
  notStarted: number;
}

export function layoutTimeline(members: readonly TimelineMember[], now: number): TimelineLayout {
  const started = members.filter((m) => m.startedAt !== null && Number.isFinite(Date.parse(m.startedAt)));
  const origin = Math.min(...started.map((m) => Date.parse(m.startedAt!)));
  const byWorker = new Map<string | null, TimelineBar[]>();
  let last = origin;
  for (const member of [...started].sort((a, b) => Date.parse(a.startedAt!) - Date.parse(b.startedAt!))) {
    const from = Date.parse(member.startedAt!) - origin;
    const ended = member.endedAt === null ? NaN : Date.parse(member.endedAt);
    const open = !Number.isFinite(ended);
    const to = Math.max(from, (open ? now : ended) - origin);
    last = Math.max(last, origin + to);
    const worker = member.workerId ?? null;
    const bars = byWorker.get(worker) ?? [];
    bars.push({ member, from, to, open });
    byWorker.set(worker, bars);
  }
  const lanes: TimelineLane[] = [];
  // Workers in order of their first start (the map keeps insertion order); unknown last.
  const workers = [...byWorker.keys()].sort((a, b) => (a === null ? 1 : b === null ? -1 : 0));
  for (const worker of workers) {
    const own: TimelineLane[] = [];
    for (const bar of byWorker.get(worker)!) {
      const free = own.find((lane) => lane.bars[lane.bars.length - 1]!.to <= bar.from);
      if (free) free.bars.push(bar);
      else own.push({ worker, slot: own.length, bars: [bar] });
    }
    lanes.push(...own);
  }
  return { lanes, origin: started.length > 0 ? origin : now, span: started.length > 0 ? last - origin : 0, notStarted: members.length - started.length };
}

/** Tick offsets (ms) for an axis of `span` ms: a round step (1, 2 or 5 × 10^k ms) giving at most `maxTicks` intervals. */
export function timeTicks(span: number, maxTicks = 8): number[] {
  if (!(span > 0)) return [0];
  let step = 1;
  for (let power = 1; ; power *= 10) {
    const fit = [1, 2, 5].map((m) => m * power).find((s) => span / s <= maxTicks);
    if (fit) {
      step = fit;
      break;
    }
  }
  const ticks: number[] = [];
  for (let t = 0; t <= span; t += step) ticks.push(t);
  return ticks;
}
