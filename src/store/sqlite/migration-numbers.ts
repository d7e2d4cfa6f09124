/**
 * One ladder of migration numbers for both stores: a step has the same number
 * on SQLite as on PostgreSQL (SQLite has no 5, PostgreSQL's own). Before the
 * shared ladder, SQLite numbered its steps on its own (6–23 one lower, 24 for
 * 25), and its stores recorded those numbers. Each recorded step is known by
 * its name, which never changes: before migrating, a recorded step whose number
 * is not its number on the ladder takes it, so a store at any old number
 * neither runs a step again nor skips one. A store that already has the
 * ladder's numbers changes nothing (one read per start).
 */
import type Database from 'better-sqlite3';

export function renumberToLadder(db: Database.Database, ladder: ReadonlyArray<{ version: number; name: string }>): void {
  const numberOf = new Map(ladder.map((m) => [m.name, m.version]));
  const recorded = db.prepare('SELECT version, name FROM schema_migrations').all() as { version: number; name: string }[];
  const moves = recorded.flatMap((r) => {
    const to = numberOf.get(r.name);
    return to !== undefined && to !== r.version ? [{ from: r.version, to }] : [];
  });
  if (moves.length === 0) return;
  // Through negative numbers: a step's old number may be another's new one.
  const renumber = db.prepare('UPDATE schema_migrations SET version = ? WHERE version = ?');
  for (const m of moves) renumber.run(-m.to, m.from);
  for (const m of moves) renumber.run(m.to, -m.to);
}
