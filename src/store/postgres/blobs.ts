/**
 * Artifact bytes in PostgreSQL, in 1 MiB chunks (bytea rows), with a size cap:
 * in a deployment of many machines on one database, the worker that wrote a
 * trace and the API process that serves it are rarely the same machine, so the
 * bytes travel through the database like everything else.
 *
 * The chunks are written in their own transaction before the artifact row
 * (which comes with the member's outcome, fenced by its lease); chunks whose
 * row never came are swept by age (`sweepOrphans`).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { ArtifactTooLargeError, DEFAULT_MAX_ARTIFACT_BYTES, type ArtifactBlobStore } from '../../artifacts/blobs.js';
import { withClient, withTransaction } from './connection.js';
import type { Names } from './statements.js';

const CHUNK_BYTES = 1024 * 1024;
const PG_PREFIX = 'pg:';

export class PostgresBlobStore implements ArtifactBlobStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly names: Names,
    readonly maxBytes: number = DEFAULT_MAX_ARTIFACT_BYTES,
  ) {}

  async put(id: string, file: string): Promise<{ location: string; size: number }> {
    const { size } = await stat(file);
    if (size > this.maxBytes) throw new ArtifactTooLargeError(size, this.maxBytes);
    await withTransaction(this.pool, async (tx) => {
      let seq = 0;
      for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES })) {
        await tx.query({
          name: 'runset.putArtifactChunk',
          text: `INSERT INTO ${this.names.artifactChunks} (blob_id, seq, data) VALUES ($1, $2, $3)`,
          values: [id, seq++, chunk as Buffer],
        });
      }
      // An empty file still gets its chunk 0, so that "no chunk 0" always means "gone".
      if (seq === 0) {
        await tx.query(`INSERT INTO ${this.names.artifactChunks} (blob_id, seq, data) VALUES ($1, 0, ''::bytea)`, [id]);
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
      client.query(`DELETE FROM ${this.names.artifactChunks} WHERE blob_id = ANY($1::text[])`, [ids]),
    );
  }

  async sweepOrphans(before: Date): Promise<number> {
    const res = await withClient(this.pool, (client) =>
      client.query(
        `DELETE FROM ${this.names.artifactChunks} AS c
         WHERE c.blob_id IN (
           SELECT o.blob_id FROM ${this.names.artifactChunks} AS o
           WHERE o.seq = 0 AND o.created_at < $1
             AND NOT EXISTS (SELECT 1 FROM ${this.names.artifacts} AS a WHERE a.id = o.blob_id)
         )`,
        [before],
      ),
    );
    return res.rowCount ?? 0;
  }

  private async chunk(id: string, seq: number): Promise<Buffer | undefined> {
    const { rows } = await withClient(this.pool, (client) =>
      client.query<{ data: Buffer }>({
        name: 'runset.getArtifactChunk',
        text: `SELECT data FROM ${this.names.artifactChunks} WHERE blob_id = $1 AND seq = $2`,
        values: [id, seq],
      }),
    );
    return rows[0]?.data;
  }
}
