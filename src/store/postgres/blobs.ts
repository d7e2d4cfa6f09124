/**
 * Artifact bytes in PostgreSQL, in 1 MiB chunks (bytea rows), with a size cap:
 * in a deployment of many machines on one database, the worker that wrote a
 * trace and the API process that serves it are rarely the same machine, so the
 * bytes travel through the database like everything else.
 *
 * The chunks are written in their own transaction before the artifact row
 * (which comes with the member's outcome, fenced by its lease); chunks whose
 * row never came are swept by age (`sweepOrphans`).
 *
 * Suite archives use the same class over a table of their own (suite_chunks,
 * owned by suite_versions: SUITE_ARCHIVE_TABLES), so that the artifact sweep
 * never sees them. Their ids are their bytes' hash: the same id stored twice is
 * the same bytes, and a second store of it writes nothing.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { BlobTooLargeError, DEFAULT_MAX_ARTIFACT_BYTES, type ArtifactBlobStore } from '../../artifacts/blobs.js';
import { withClient, withTransaction } from './connection.js';
import type { Names } from './statements.js';

const CHUNK_BYTES = 1024 * 1024;
const PG_PREFIX = 'pg:';

/** Where one kind of blob lives: its chunks' table and the table whose `id` names the blobs still wanted. */
export interface BlobTables {
  chunks: string;
  owners: string;
  /** What the bytes are, for errors and statement names. */
  what: 'artifact' | 'suite archive';
  /** The id is the bytes' hash: storing an id again writes nothing. */
  contentAddressed: boolean;
}

export const ARTIFACT_TABLES = (n: Names): BlobTables => ({ chunks: n.artifactChunks, owners: n.artifacts, what: 'artifact', contentAddressed: false });
export const SUITE_ARCHIVE_TABLES = (n: Names): BlobTables => ({ chunks: n.suiteChunks, owners: n.suiteVersions, what: 'suite archive', contentAddressed: true });

export class PostgresBlobStore implements ArtifactBlobStore {
  private readonly t: BlobTables;
  /** Prepared statement names, one set per kind of blob (a name is bound to its text). */
  private readonly stmt: string;

  constructor(
    private readonly pool: pg.Pool,
    names: Names,
    readonly maxBytes: number = DEFAULT_MAX_ARTIFACT_BYTES,
    tables: BlobTables = ARTIFACT_TABLES(names),
  ) {
    this.t = tables;
    this.stmt = tables.what === 'artifact' ? 'Artifact' : 'SuiteArchive';
  }

  async put(id: string, file: string): Promise<{ location: string; size: number }> {
    const { size } = await stat(file);
    if (size > this.maxBytes) throw new BlobTooLargeError(size, this.maxBytes, this.t.what);
    // The same id is the same bytes, so the same chunks: ones already there are kept as they are.
    const onConflict = this.t.contentAddressed ? ' ON CONFLICT (blob_id, seq) DO NOTHING' : '';
    await withTransaction(this.pool, async (tx) => {
      let seq = 0;
      for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES })) {
        await tx.query({
          name: `runset.put${this.stmt}Chunk`,
          text: `INSERT INTO ${this.t.chunks} (blob_id, seq, data) VALUES ($1, $2, $3)${onConflict}`,
          values: [id, seq++, chunk as Buffer],
        });
      }
      // An empty file still gets its chunk 0, so that "no chunk 0" always means "gone".
      if (seq === 0) {
        await tx.query(`INSERT INTO ${this.t.chunks} (blob_id, seq, data) VALUES ($1, 0, ''::bytea)${onConflict}`, [id]);
      }
    });
    return { location: PG_PREFIX + id, size };
  }

  async open(location: string): Promise<Readable | undefined> {
    if (!location.startsWith(PG_PREFIX)) return undefined;
    const id = location.slice(PG_PREFIX.length);
    const first = await this.chunk(id, 0);
    if (first === undefined) return undefined;
    // One chunk in memory at a time, fetched as the client reads.
    return Readable.from(this.chunks(id, first), { objectMode: false });
  }

  private async *chunks(id: string, first: Buffer): AsyncGenerator<Buffer> {
    yield first;
    for (let seq = 1; ; seq++) {
      const next = await this.chunk(id, seq);
      if (next === undefined) return;
      yield next;
    }
  }

  async remove(locations: readonly string[]): Promise<void> {
    const ids = locations.filter((l) => l.startsWith(PG_PREFIX)).map((l) => l.slice(PG_PREFIX.length));
    if (ids.length === 0) return;
    await withClient(this.pool, (client) =>
      client.query(`DELETE FROM ${this.t.chunks} WHERE blob_id = ANY($1::text[])`, [ids]),
    );
  }

  async sweepOrphans(before: Date): Promise<number> {
    const res = await withClient(this.pool, (client) =>
      client.query(
        `DELETE FROM ${this.t.chunks} AS c
         WHERE c.blob_id IN (
           SELECT o.blob_id FROM ${this.t.chunks} AS o
           WHERE o.seq = 0 AND o.created_at < $1
             AND NOT EXISTS (SELECT 1 FROM ${this.t.owners} AS a WHERE a.id = o.blob_id)
         )`,
        [before],
      ),
    );
    return res.rowCount ?? 0;
  }

  private async chunk(id: string, seq: number): Promise<Buffer | undefined> {
    const { rows } = await withClient(this.pool, (client) =>
      client.query<{ data: Buffer }>({
        name: `runset.get${this.stmt}Chunk`,
        text: `SELECT data FROM ${this.t.chunks} WHERE blob_id = $1 AND seq = $2`,
        values: [id, seq],
      }),
    );
    return rows[0]?.data;
  }
}
