/**
 * A test's last outcomes as a strip of cells, oldest at the left: a failure is
 * a full-height hatched cell, a flaky pass a two-thirds one, a pass a short
 * one and a cancel a hollow one, so the strip reads without colour. Each cell links to its run and says
 * what it was on hover; like the set timeline, the cells are out of the tab
 * order and hidden from screen readers, which get the strip in words instead.
 */
import { OUTCOME_TEXT, outcomeStrip, stripSummary, type StripOutcome } from '../test-table.js';

export function OutcomeStrip({ outcomes }: { outcomes: StripOutcome[] }) {
  const cells = outcomeStrip(outcomes);
  return (
    <span class="strip">
      <span class="visually-hidden">{stripSummary(cells)}</span>
      <span class="strip-cells" aria-hidden="true">
        {cells.map((c) => (
          <a
            key={c.testRunId}
            class={`strip-cell strip-${c.kind}`}
            data-kind={c.kind}
            href={`/sets/${c.setId}/runs/${c.testRunId}`}
            tabIndex={-1}
            title={`${OUTCOME_TEXT[c.kind]}${c.endedAt ? `, ${new Date(c.endedAt).toLocaleString()}` : ''}`}
          />
        ))}
      </span>
    </span>
  );
}
