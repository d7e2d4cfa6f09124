/**
 * The serving process's copy of recently read set rows, for the status GET.
 *
 * Why it is safe: in the embedded store one process — the owner of the data
 * dir's lock — writes sets, and every set write drops the set's entry inside its
 * transaction. better-sqlite3 is synchronous, so no read can slip in between
 * the write and the drop; a write that rolls back only costs one more read.
 * Misses are never kept (a set created later must be found), and the copy is
 * bounded: past `limit` entries the oldest goes.
 *
 * Why it pays: every SQLite read transaction takes and drops a file lock and
 * stats the file (three system calls), which cost more than the rest of the
 * status GET on a small virtual machine (bench/README.md, bench:status).
 */
import type { TestRunSetRecord } from '../../core/types.js';

export class SetRowCache {
  private readonly rows = new Map<string, Readonly<TestRunSetRecord>>();

  constructor(private readonly limit = 10_000) {}

  get(id: string): Readonly<TestRunSetRecord> | undefined {
    return this.rows.get(id);
  }

  set(set: TestRunSetRecord): Readonly<TestRunSetRecord> {
    if (this.rows.size >= this.limit) this.rows.delete(this.rows.keys().next().value as string);
    const frozen = Object.freeze({ ...set, counts: Object.freeze({ ...set.counts }) });
    this.rows.set(set.id, frozen);
    return frozen;
  }

  drop(id: string): void {
    this.rows.delete(id);
  }
}
