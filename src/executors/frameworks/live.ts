/**
 * Members that move while their share's framework process runs: runset's
 * reporter inside that process (./vitest-reporter.ts, ./jest-reporter.ts,
 * ./mocha-reporter.cts, ./cucumber-reporter.ts)
 * appends events to a file the executor follows (../event-log.ts, as for
 * Playwright), and this tracker turns them into each member's begin and end.
 * A case's end carries a fragment of the framework's own report (the entries
 * its JSON report would hold for it), read by the adapter's own reader, so a
 * live end and the report's agree by construction; the report read at the end
 * settles every case the stream did not. No processes here: it is tested with
 * plain events.
 */
import type { BatchExecutionContext, CaseResult, FrameworkTestSpec } from '../../core/types.js';
import { caseKey, type FrameworkAdapter, type ReportedCase } from './adapter.js';
import { relativeFile } from './jest-json.js';
import type { LiveEvent } from './live-events.js';

interface LiveCase {
  index: number;
  file: string;
  begun: boolean;
  ended: boolean;
}

export class LiveTracker {
  private readonly byKey = new Map<string, LiveCase>();
  private readonly byFile = new Map<string, LiveCase[]>();
  private readonly byIndex: Array<LiveCase | undefined> = [];

  constructor(
    specs: readonly FrameworkTestSpec[],
    private readonly adapter: FrameworkAdapter,
    private readonly dir: string,
    private readonly caseStarts: boolean,
    private readonly ctx: Pick<BatchExecutionContext, 'onBegin' | 'onEnd'>,
    /** The member's result from its case (its attachments made artifacts); plain `resultOf` by default. */
    private readonly toResult: (index: number, c: ReportedCase) => CaseResult = (_, c) => resultOf(c),
  ) {
    specs.forEach((spec, index) => {
      if (!spec.case) return;
      const state: LiveCase = { index, file: spec.case.file, begun: false, ended: false };
      this.byKey.set(caseKey(spec.case.file, spec.case.titles), state);
      this.byIndex[index] = state;
      this.byFile.set(state.file, [...(this.byFile.get(state.file) ?? []), state]);
    });
  }

  /** Whether the member at `index` was ended from the stream. */
  ended(index: number): boolean {
    return this.byIndex[index]?.ended ?? false;
  }

  handle(event: LiveEvent): void {
    if (event.type === 'caseBegin') this.begin(this.byKey.get(caseKey(relativeFile(this.dir, event.file), event.titles)));
    else if (event.type === 'fileBegin' && !this.caseStarts) for (const state of this.byFile.get(relativeFile(this.dir, event.file)) ?? []) this.begin(state);
    else if (event.type === 'results') this.results(event.report);
  }

  private begin(state: LiveCase | undefined): void {
    if (!state || state.begun || state.ended) return;
    state.begun = true;
    this.ctx.onBegin(state.index, 1);
  }

  private results(report: unknown): void {
    let cases: ReportedCase[];
    try {
      cases = this.adapter.read(JSON.stringify(report), this.dir).cases;
    } catch {
      return; // a fragment runset cannot read: the report at the end settles these cases
    }
    for (const c of cases) {
      const state = this.byKey.get(caseKey(c.file, c.titles));
      if (!state || state.ended) continue;
      state.ended = true;
      this.ctx.onEnd(state.index, this.toResult(state.index, c));
    }
  }
}

/** A member's result from its case in a framework's report. */
export function resultOf(c: ReportedCase): CaseResult {
  const result: CaseResult = { passed: c.status !== 'failed', error: c.error, output: c.output, attempts: c.attempts, durationMs: c.durationMs, artifacts: [] };
  if (c.status === 'skipped') result.skipped = true;
  return result;
}
