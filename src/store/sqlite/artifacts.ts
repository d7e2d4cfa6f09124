/**
 * The SQLite side of the artifacts sub-store: artifact metadata. The rows are
 * written with the outcome that carries them (./moves.ts, `insert`, inside the
 * finish's transaction); the bytes live in files (src/artifacts/).
 */
import type Database from 'better-sqlite3';
import type { ArtifactRecord, NewArtifact } from '../../core/types.js';
import type { ArtifactsStore } from '../artifacts.js';
import { rowMappers, type ArtifactRow as StoredArtifactRow } from '../rows.js';
import { settle } from './settle.js';

type ArtifactRow = StoredArtifactRow<string>;

const ARTIFACT_COLUMNS = 'id, run_id, set_id, name, content_type, size, location, created_at';
const { toArtifact } = rowMappers<string>((value) => value);

export class SqliteArtifacts implements ArtifactsStore {
  private readonly sql: Record<'insert' | 'list' | 'get' | 'old' | 'delete', Database.Statement>;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      insert: db.prepare(`
        INSERT INTO artifacts (${ARTIFACT_COLUMNS})
        VALUES (@id, @run_id, @set_id, @name, @content_type, @size, @location, @created_at)`),
      list: db.prepare(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE set_id = ? ORDER BY run_id, created_at, name`),
      get: db.prepare(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE id = ?`),
      old: db.prepare(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE created_at < ? ORDER BY created_at LIMIT ?`),
      delete: db.prepare('DELETE FROM artifacts WHERE id = ?'),
    };
  }

  /** A finished member's artifacts, inside the finish's transaction. */
  insert(runId: string, setId: string, artifacts: readonly NewArtifact[], at: string): void {
    for (const a of artifacts) {
      this.sql.insert.run({
        id: a.id, run_id: runId, set_id: setId, name: a.name, content_type: a.contentType, size: a.size, location: a.location, created_at: at,
      });
    }
  }

  list(setId: string): Promise<ArtifactRecord[]> {
    return settle(() => (this.sql.list.all(setId) as ArtifactRow[]).map(toArtifact));
  }

  get(id: string): Promise<ArtifactRecord | undefined> {
    return settle(() => {
      const row = this.sql.get.get(id) as ArtifactRow | undefined;
      return row ? toArtifact(row) : undefined;
    });
  }

  deleteBefore(before: string, limit: number): Promise<ArtifactRecord[]> {
    const remove = this.db.transaction((): ArtifactRecord[] => {
      const rows = this.sql.old.all(before, limit) as ArtifactRow[];
      for (const row of rows) this.sql.delete.run(row.id);
      return rows.map(toArtifact);
    });
    return settle(() => remove.immediate());
  }
}
