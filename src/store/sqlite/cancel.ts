/**
 * The SQLite store's cancel and fail-fast reads and writes. A cancel runs inside
 * a write transaction its caller (./sets.ts) opens; each member it ends moves
 * the set's counts through the same path as every other move (MoveCounts).
 */
import type Database from 'better-sqlite3';
import { isFinal, type RunState } from '../../core/states.js';
import type { SetControl } from '../../core/types.js';
import { controlOf, type ControlRow as StoredControl } from '../rows.js';
import type { CancelRequest, CancelResult } from '../sets.js';
import type { MoveCounts } from './set-moves.js';
import { now } from './statements.js';
import { failsSetSql } from '../sql/set-rollup.js';
import { SQLITE } from '../sql/dialect.js';
import { cancelMember } from '../sql/member-moves.js';

type ControlRow = StoredControl<string> & { status: RunState };

export class SqliteCancels {
  private readonly sql: Record<'control' | 'unfinished' | 'endRun' | 'markSet', Database.Statement>;

  constructor(
    db: Database.Database,
    private readonly moveCounts: MoveCounts,
  ) {
    this.sql = {
      control: db.prepare('SELECT status, max_failures, cancelled_at, cancelled_by, cancelled_by_name, cancel_error FROM test_run_sets WHERE id = ?'),
      unfinished: db.prepare("SELECT id, status FROM test_runs WHERE set_id = ? AND status IN ('WAITING', 'RUNNING')"),
      endRun: db.prepare(`
        UPDATE test_runs AS r SET ${cancelMember(SQLITE, { error: '@error' })}
        WHERE r.id = @id
        RETURNING ${failsSetSql('cancel', SQLITE.returnedOf('r', 'test_runs'), 'status', 'attempts')} AS fails`),
      markSet: db.prepare(`
        UPDATE test_run_sets SET cancelled_at = @at, cancelled_by = @by, cancelled_by_name = @by_name, cancel_error = @error
        WHERE id = @id AND cancelled_at IS NULL`),
    };
  }

  cancel(setId: string, req: CancelRequest): CancelResult {
    const control = this.sql.control.get(setId) as ControlRow | undefined;
    if (!control) return { found: false };
    if (isFinal(control.status)) return { found: true, cancelled: false };
    const at = now();
    const unfinished = this.sql.unfinished.all(setId) as Array<{ id: string; status: RunState }>;
    for (const run of unfinished) {
      const ended = this.sql.endRun.get({ id: run.id, error: req.error, at }) as { fails: number };
      this.moveCounts(setId, run.status, 'FAIL', at, ended.fails === 1);
    }
    this.sql.markSet.run({ id: setId, at, by: req.byKeyId, by_name: req.byKeyName, error: req.error });
    return { found: true, cancelled: true };
  }

  control(setId: string): SetControl | null {
    const row = this.sql.control.get(setId) as ControlRow | undefined;
    return row ? controlOf(row, (at) => at) : null;
  }
}
