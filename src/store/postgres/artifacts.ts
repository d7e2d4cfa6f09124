/**
 * The PostgreSQL side of the artifacts sub-store: artifact metadata (the rows
 * come with the outcome that carries them: ./moves.ts) and the bytes, kept in
 * this database (./blobs.ts) so every API process can serve what any worker
 * wrote. The rules of ./statements.ts hold.
 */
import type pg from 'pg';
import type { ArtifactRecord } from '../../core/types.js';
import type { ArtifactsStore } from '../artifacts.js';
import { rowMappers, type ArtifactRow as StoredArtifactRow } from '../rows.js';
import { withClient, type Queryable } from './connection.js';
import { PostgresBlobStore } from './blobs.js';
import type { Names } from './statements.js';

/** PostgreSQL returns timestamps as Dates. */
const { toArtifact } = rowMappers<Date>((value) => value.toISOString());

export class PostgresArtifacts implements ArtifactsStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  async list(setId: string): Promise<ArtifactRecord[]> {
    return (await withClient(this.pool, (q) => listArtifacts(q, this.n, setId))).map(toArtifact);
  }

  async get(id: string): Promise<ArtifactRecord | undefined> {
    const row = await withClient(this.pool, (q) => getArtifact(q, this.n, id));
    return row ? toArtifact(row) : undefined;
  }

  async deleteBefore(before: string, limit: number): Promise<ArtifactRecord[]> {
    return (await withClient(this.pool, (q) => deleteOldArtifacts(q, this.n, before, limit))).map(toArtifact);
  }

  /** Artifact bytes in this database (chunked), so every API process can serve what any worker wrote. */
  blobs(maxBytes?: number): PostgresBlobStore {
    return new PostgresBlobStore(this.pool, this.n, maxBytes);
  }
}

type ArtifactRow = StoredArtifactRow<Date>;

const ARTIFACT_COLUMNS = 'id, run_id, set_id, name, content_type, size, location, created_at';

async function listArtifacts(q: Queryable, n: Names, setId: string): Promise<ArtifactRow[]> {
  const { rows } = await q.query<ArtifactRow>({
    name: 'runset.listArtifacts',
    text: `SELECT ${ARTIFACT_COLUMNS} FROM ${n.artifacts} WHERE set_id = $1 ORDER BY run_id, created_at, name`,
    values: [setId],
  });
  return rows;
}

async function getArtifact(q: Queryable, n: Names, id: string): Promise<ArtifactRow | undefined> {
  const { rows } = await q.query<ArtifactRow>({
    name: 'runset.getArtifact',
    text: `SELECT ${ARTIFACT_COLUMNS} FROM ${n.artifacts} WHERE id = $1`,
    values: [id],
  });
  return rows[0];
}

/** Deletes the oldest artifacts created before `before`; rows another sweeper holds are left to it. */
async function deleteOldArtifacts(q: Queryable, n: Names, before: string, limit: number): Promise<ArtifactRow[]> {
  const { rows } = await q.query<ArtifactRow>({
    name: 'runset.deleteOldArtifacts',
    text: `
      WITH old AS (
        SELECT id FROM ${n.artifacts} WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED
      )
      DELETE FROM ${n.artifacts} AS a USING old WHERE a.id = old.id
      RETURNING a.id, a.run_id, a.set_id, a.name, a.content_type, a.size, a.location, a.created_at`,
    values: [before, limit],
  });
  return rows;
}

