/**
 * How a member move carries to its set, on SQLite: every move (./moves.ts,
 * ./cancel.ts) calls `move` inside its transaction, which writes what the rule
 * (moveSet, src/core/moves.ts) makes of the set: counts, status, timestamps;
 * and tells the set's watchers once the transaction has returned. The
 * PostgreSQL store writes the same rule in SQL (../postgres/set-moves.ts).
 */
import type { EventEmitter } from 'node:events';
import type Database from 'better-sqlite3';
import type { RunState } from '../../core/states.js';
import { moveSet } from '../../core/moves.js';
import { countsOf } from '../rows.js';
import type { SetRowCache } from './set-cache.js';
import { SET_COLUMNS, type SetRow } from './statements.js';

/** One member of `setId` moved `from` → `to` at `at` (ISO); `fails`: that end fails the set (failsSet, src/core/moves.ts). */
export type MoveCounts = (setId: string, from: RunState, to: RunState, at: string, fails?: boolean) => void;

/** The event a set's move emits on the store's wake-up emitter, once its transaction has returned. */
export const SET_CHANGED = 'changed';

export class SetMoves {
  private readonly sql: Record<'getSet' | 'updateSetProgress', Database.Statement>;
  /** Sets moved by the transaction under way, told to SET_CHANGED's listeners once it returns. */
  private readonly movedSets = new Set<string>();

  constructor(
    db: Database.Database,
    /** The owning process's copy of set rows: every set write drops its entry. */
    private readonly setRows: SetRowCache | undefined,
    private readonly wake: EventEmitter,
  ) {
    this.sql = {
      getSet: db.prepare(`SELECT ${SET_COLUMNS} FROM test_run_sets WHERE id = ?`),
      updateSetProgress: db.prepare(`
        UPDATE test_run_sets SET status = @status, started_at = @started_at, ended_at = @ended_at,
          count_waiting = @count_waiting, count_running = @count_running,
          count_success = @count_success, count_fail = @count_fail, count_failing = @count_failing
        WHERE id = @id`),
    };
  }

  /** One member moved: write the set's counts, timestamps and status as the rule makes them. */
  readonly move: MoveCounts = (setId, from, to, at, fails = false) => {
    const row = this.sql.getSet.get(setId) as SetRow;
    const set = moveSet({ counts: countsOf(row), failing: row.count_failing, startedAt: row.started_at }, from, to, at, fails);
    this.setRows?.drop(setId);
    this.setMoved(setId);
    this.sql.updateSetProgress.run({
      id: setId,
      status: set.status,
      started_at: set.startedAt,
      ended_at: set.endedAt,
      count_waiting: set.counts.WAITING,
      count_running: set.counts.RUNNING,
      count_success: set.counts.SUCCESS,
      count_fail: set.counts.FAIL,
      count_failing: set.failing,
    });
  };

  /**
   * Every write of sets happens in this process, inside a synchronous
   * transaction: the ids a transaction moved are told once it has returned
   * (committed), so a listener that reads finds the new state. A move that
   * rolled back costs its listeners one read that finds nothing new.
   */
  private setMoved(setId: string): void {
    if (this.movedSets.size === 0) queueMicrotask(() => this.tellSetsChanged());
    this.movedSets.add(setId);
  }

  private tellSetsChanged(): void {
    const ids = [...this.movedSets];
    this.movedSets.clear();
    for (const id of ids) this.wake.emit(SET_CHANGED, id);
  }
}
