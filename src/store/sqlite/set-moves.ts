/**
 * How a member move carries to its set, on SQLite: every move (./moves.ts,
 * ./cancel.ts) calls `move` inside its transaction, which runs the roll-up both
 * stores share (../sql/set-rollup.ts) over that one move: counts, status,
 * timestamps; and tells the set's watchers once the transaction has returned.
 */
import type { EventEmitter } from 'node:events';
import type Database from 'better-sqlite3';
import type { RunState } from '../../core/states.js';
import { SQLITE } from '../sql/dialect.js';
import { setRollUp } from '../sql/set-rollup.js';
import type { SetRowCache } from './set-cache.js';

/** One member of `setId` moved `from` → `to` at `at` (ISO); `fails`: that end fails the set (failsSetSql, ../sql/set-rollup.ts). */
export type MoveCounts = (setId: string, from: RunState, to: RunState, at: string, fails?: boolean) => void;

/** The event a set's move emits on the store's wake-up emitter, once its transaction has returned. */
export const SET_CHANGED = 'changed';

export class SetMoves {
  /** The roll-up fed by one moved member (SQLite allows no UPDATE inside a WITH, so each move is its own). */
  private readonly rollUp: Database.Statement;
  /** Sets moved by the transaction under way, told to SET_CHANGED's listeners once it returns. */
  private readonly movedSets = new Set<string>();

  constructor(
    db: Database.Database,
    /** The owning process's copy of set rows: every set write drops its entry. */
    private readonly setRows: SetRowCache | undefined,
    private readonly wake: EventEmitter,
  ) {
    const { ctes, update } = setRollUp(SQLITE, 'test_run_sets');
    this.rollUp = db.prepare(`WITH moved AS (SELECT @set_id AS set_id, @previous AS previous, @next AS next, @fails AS fails), ${ctes} ${update}`);
  }

  /** One member moved: write the set's counts, timestamps and status as the roll-up makes them. */
  readonly move: MoveCounts = (setId, from, to, at, fails = false) => {
    this.setRows?.drop(setId);
    this.setMoved(setId);
    this.rollUp.run({ set_id: setId, previous: from, next: to, fails: fails ? 1 : 0, at });
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
