/**
 * The PostgreSQL side of the suite versions sub-store (../suite-versions.ts): versions, their
 * names, which are no longer used, and the archives' bytes in this database
 * (suite_chunks, through ./blobs.ts) so that any API process serves what
 * another stored. The rules of ./statements.ts hold.
 */
import type pg from 'pg';
import { DEFAULT_MAX_SUITE_BYTES, SUITE_ID, type SuiteVersionInfo } from '../../core/suites.js';
import type { TestSpec } from '../../core/types.js';
import { rowMappers, type SuiteVersionRow } from '../rows.js';
import type { NewSuiteVersion, SuiteVersionsStore } from '../suite-versions.js';
import { PostgresBlobStore, SUITE_ARCHIVE_TABLES } from './blobs.js';
import { withClient, type Queryable } from './connection.js';
import type { Names } from './statements.js';

/** PostgreSQL returns timestamps as Dates. */
const { toSuiteVersion } = rowMappers<Date>((value) => value.toISOString());

/** A version with how many sets ran it and when the newest was created (the partial index on test_run_sets.suite serves both). */
function versionColumns(n: Names): string {
  return `
    v.id, v.size, v.files, v.source_commit, v.location, v.created_at,
    (SELECT count(*) FROM ${n.sets} s WHERE s.suite = v.id) AS sets,
    (SELECT max(s.created_at) FROM ${n.sets} s WHERE s.suite = v.id) AS last_set_at`;
}

export class PostgresSuiteVersions implements SuiteVersionsStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  async put(version: NewSuiteVersion): Promise<{ created: boolean }> {
    const { rowCount } = await withClient(this.pool, (q) =>
      q.query({
        name: 'runset.suites.put',
        text: `
          INSERT INTO ${this.n.suiteVersions} (id, size, files, source_commit, tests, location)
          VALUES ($1, $2, $3, $4, $5::json, $6)
          ON CONFLICT (id) DO NOTHING`,
        values: [version.id, version.size, version.files, version.commit, JSON.stringify(version.tests), version.location],
      }),
    );
    return { created: rowCount === 1 };
  }

  async ranIn(id: string, envs: readonly string[]): Promise<boolean> {
    // Through the partial index test_run_sets_suite.
    const { rowCount } = await withClient(this.pool, (q) =>
      q.query({ name: 'runset.suites.ranIn', text: `SELECT 1 FROM ${this.n.sets} WHERE suite = $1 AND env = ANY($2::text[]) LIMIT 1`, values: [id, envs] }),
    );
    return (rowCount ?? 0) > 0;
  }

  get(id: string): Promise<(SuiteVersionInfo & { location: string }) | undefined> {
    return withClient(this.pool, async (q) => {
      const { rows } = await q.query<SuiteVersionRow<Date>>({
        name: 'runset.suites.get',
        text: `SELECT ${versionColumns(this.n)} FROM ${this.n.suiteVersions} v WHERE v.id = $1`,
        values: [id],
      });
      const row = rows[0];
      return row && toSuiteVersion(row, (await namesOf(q, this.n, id)).get(id) ?? []);
    });
  }

  async tests(id: string): Promise<readonly TestSpec[] | undefined> {
    const { rows } = await withClient(this.pool, (q) =>
      q.query<{ tests: TestSpec[] }>({ name: 'runset.suites.tests', text: `SELECT tests FROM ${this.n.suiteVersions} WHERE id = $1`, values: [id] }),
    );
    return rows[0]?.tests;
  }

  async resolve(idOrName: string): Promise<string | undefined> {
    // An id first: a name may look like one, but an id names its version whatever the names say.
    const asId = SUITE_ID.test(idOrName) ? idOrName : null;
    const { rows } = await withClient(this.pool, (q) =>
      q.query<{ id: string }>({
        name: 'runset.suites.resolve',
        text: `
          SELECT id FROM (
            SELECT id, 0 AS rank FROM ${this.n.suiteVersions} WHERE id = $1
            UNION ALL SELECT version_id, 1 FROM ${this.n.suiteNames} WHERE name = $2
          ) AS found ORDER BY rank LIMIT 1`,
        values: [asId, idOrName],
      }),
    );
    return rows[0]?.id;
  }

  async setName(name: string, id: string): Promise<void> {
    const { rowCount } = await withClient(this.pool, (q) =>
      q.query({
        name: 'runset.suites.setName',
        // Only when the version exists: a clear error below rather than the foreign key's.
        text: `
          INSERT INTO ${this.n.suiteNames} (name, version_id)
          SELECT $1, id FROM ${this.n.suiteVersions} WHERE id = $2
          ON CONFLICT (name) DO UPDATE SET version_id = excluded.version_id, updated_at = now()`,
        values: [name, id],
      }),
    );
    if (rowCount !== 1) throw new Error(`no suite version ${id}: upload it before naming it`);
  }

  list(): Promise<SuiteVersionInfo[]> {
    return withClient(this.pool, async (q) => {
      const { rows } = await q.query<SuiteVersionRow<Date>>({
        name: 'runset.suites.list',
        text: `SELECT ${versionColumns(this.n)} FROM ${this.n.suiteVersions} v ORDER BY v.created_at DESC, v.id`,
      });
      const names = await namesOf(q, this.n);
      return rows.map((row) => {
        const { location: _location, ...info } = toSuiteVersion(row, names.get(row.id) ?? []);
        return info;
      });
    });
  }

  async removeUnused(before: Date): Promise<Array<{ id: string; location: string }>> {
    const { rows } = await withClient(this.pool, (q) =>
      q.query<{ id: string; location: string }>({
        name: 'runset.suites.removeUnused',
        // A set created meanwhile that names a version being removed waits on the row, then fails its
        // foreign key: a version either stays with its set or goes before any set names it.
        text: `
          DELETE FROM ${this.n.suiteVersions} AS v
          WHERE v.created_at < $1
            AND NOT EXISTS (SELECT 1 FROM ${this.n.sets} s WHERE s.suite = v.id)
            AND NOT EXISTS (SELECT 1 FROM ${this.n.suiteNames} n WHERE n.version_id = v.id)
          RETURNING v.id, v.location`,
        values: [before],
      }),
    );
    return rows;
  }

  /** Archives' bytes in this database, apart from artifacts' (the artifact orphan sweep never sees them). */
  archives(maxBytes: number = DEFAULT_MAX_SUITE_BYTES): PostgresBlobStore {
    return new PostgresBlobStore(this.pool, this.n, maxBytes, SUITE_ARCHIVE_TABLES(this.n));
  }
}

/** The names pointing at each version (of one version, when `id` is given), sorted. */
async function namesOf(q: Queryable, n: Names, id?: string): Promise<Map<string, string[]>> {
  const { rows } = await q.query<{ name: string; version_id: string }>({
    name: id === undefined ? 'runset.suites.allNames' : 'runset.suites.namesOf',
    text: `SELECT name, version_id FROM ${n.suiteNames}${id === undefined ? '' : ' WHERE version_id = $1'} ORDER BY name COLLATE "C"`,
    values: id === undefined ? [] : [id],
  });
  const byVersion = new Map<string, string[]>();
  for (const { name, version_id } of rows) {
    const of = byVersion.get(version_id);
    if (of) of.push(name);
    else byVersion.set(version_id, [name]);
  }
  return byVersion;
}
