/**
 * Members that move while their share's framework process runs: runset's
 * reporter inside that process (./vitest-reporter.ts, ./jest-reporter.ts,
 * ./mocha-reporter.cts, ./cucumber-reporter.ts) appends events (./live-events.ts)
 * to a file the executor follows, and this extension of the one live-event
 * tracker (../live-tracker.ts) turns them into each member's begin and end.
 * A case's end carries a fragment of the framework's own report (the entries
 * its JSON report would hold for it), read by the adapter's own reader, so a
 * live end and the report's agree by construction; the report read at the end
 * settles every case the stream did not.
 */
import type { BatchExecutionContext, CaseResult, FrameworkTestSpec } from '../../core/types.js';
import { LiveTracker, type TrackedCase } from '../live-tracker.js';
import { caseKey } from '../listed-case.js';
import type { FrameworkAdapter, ReportedCase } from './adapter.js';
import { relativeFile } from './jest-json.js';
import type { LiveEvent } from './live-events.js';

interface LiveCase extends TrackedCase {
  file: string;
}

export class FrameworkTracker extends LiveTracker<LiveCase, LiveEvent> {
  private readonly byFile = new Map<string, LiveCase[]>();

  constructor(
    specs: readonly FrameworkTestSpec[],
    private readonly adapter: FrameworkAdapter,
    private readonly dir: string,
    private readonly caseStarts: boolean,
    ctx: Pick<BatchExecutionContext, 'onBegin' | 'onEnd'>,
    /** The member's result from its case (its attachments made artifacts); plain `resultOf` by default. */
    private readonly toResult: (index: number, c: ReportedCase) => CaseResult = (_, c) => resultOf(c),
    /** The process's start allowance (../live-tracker.ts); default PROCESS_START_MS. */
    startMs?: number,
  ) {
    super(ctx, Date.now, startMs);
    specs.forEach((spec, index) => {
      if (!spec.case) return;
      const state: LiveCase = { index, file: spec.case.file, begun: false, ended: false };
      this.track(caseKey(spec.case), state);
      this.byFile.set(state.file, [...(this.byFile.get(state.file) ?? []), state]);
    });
  }

  handle(event: LiveEvent): void {
    this.heard();
    if (event.type === 'caseBegin') this.caseBegin(this.caseOf(caseKey({ file: relativeFile(this.dir, event.file), titles: event.titles })));
    else if (event.type === 'fileBegin' && !this.caseStarts) for (const state of this.byFile.get(relativeFile(this.dir, event.file)) ?? []) this.caseBegin(state);
    else if (event.type === 'results') this.results(event.report);
  }

  /** A framework tells no retry's start: a member begins once. */
  private caseBegin(state: LiveCase | undefined): void {
    if (!state || state.begun || state.ended) return;
    this.begin(state, 1);
  }

  private results(report: unknown): void {
    let cases: ReportedCase[];
    try {
      cases = this.adapter.read(JSON.stringify(report), this.dir).cases;
    } catch {
      return; // a fragment runset cannot read: the report at the end settles these cases
    }
    for (const c of cases) {
      const state = this.caseOf(caseKey(c));
      if (!state || state.ended) continue;
      this.settle(state, this.toResult(state.index, c));
    }
  }
}

/** A member's result from its case in a framework's report. */
export function resultOf(c: ReportedCase): CaseResult {
  const result: CaseResult = { passed: c.status !== 'failed', error: c.error, output: c.output, attempts: c.attempts, durationMs: c.durationMs, artifacts: [] };
  if (c.status === 'skipped') result.skipped = true;
  return result;
}
