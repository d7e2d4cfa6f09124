/**
 * Fills a store with a long history fast: the sets a real `runset serve` ran
 * (the templates, with their members) are cloned N times straight in SQL, each
 * clone with fresh random UUIDs and its times moved `spacingSeconds` further
 * into the past per clone. Every column is copied from the template, so the
 * rows are what the real code writes, whatever migrations added since; only
 * ids and times change. Clone n copies template n mod templates.length.
 *
 * SQLite: a temporary table of new ids (randomblob), then INSERT … SELECT from
 * a recursive counter joined to the templates, in transactions of `chunk`
 * clones. PostgreSQL: the same with generate_series and gen_random_uuid().
 * Ids are shaped as runset makes them (src/core/ids.ts): UUIDv7, whose first
 * 48 bits are the clone's creation time in milliseconds, the rest random.
 * Secondary indexes are dropped while loading and built again at the end.
 * Run it while no `serve` uses the store.
 */
import Database from 'better-sqlite3';
import pg from 'pg';

export interface CloneOptions {
  /** The sets to copy: ended sets in the store, with their members. */
  templateIds: readonly string[];
  clones: number;
  /** Clone n is n × this many seconds older than its template. */
  spacingSeconds: number;
  /** Clones per transaction. */
  chunk?: number;
  onProgress?: (done: number) => void;
}

/** Columns rewritten per clone; every other column is copied as it is. */
const SET_TIMES = ['created_at', 'started_at', 'ended_at'];
const RUN_TIMES = ['started_at', 'ended_at'];

export function cloneSqliteHistory(file: string, options: CloneOptions): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1000000'); // 1 GB of page cache while loading
    const columns = (table: string) => (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    const sqliteTime = (column: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', t.${column}, '-' || (c.n * ${options.spacingSeconds}) || ' seconds')`;
    // randomblob() is evaluated per row (a non-deterministic function), so each id is fresh;
    // the first 48 bits are the clone's creation time (c.ms), as in a UUIDv7.
    const uuidv7 = (ms: string) =>
      `lower(substr(printf('%012x', ${ms}), 1, 8) || '-' || substr(printf('%012x', ${ms}), 9, 4) || '-7' || substr(hex(randomblob(2)), 2) || '-8' || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
    db.exec(`CREATE TEMP TABLE clone_templates (k INTEGER PRIMARY KEY, id TEXT NOT NULL)`);
    const addTemplate = db.prepare('INSERT INTO clone_templates (k, id) VALUES (?, ?)');
    options.templateIds.forEach((id, k) => addTemplate.run(k, id));
    db.exec(`CREATE TEMP TABLE clones (n INTEGER PRIMARY KEY, id TEXT NOT NULL, template TEXT NOT NULL, ms INTEGER NOT NULL)`);

    const setColumns = columns('test_run_sets');
    const setValues = setColumns.map((c) => (c === 'id' ? 'c.id' : SET_TIMES.includes(c) ? sqliteTime(c) : `t.${c}`));
    const runColumns = columns('test_runs');
    const runValues = runColumns.map((c) =>
      c === 'id' ? uuidv7('c.ms') : c === 'set_id' ? 'c.id' : RUN_TIMES.includes(c) ? sqliteTime(c) : `t.${c}`,
    );
    const fillClones = db.prepare(`
      WITH RECURSIVE counter(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM counter WHERE n < ?),
      timed AS (
        SELECT n, k.id AS template,
               CAST(round((julianday(s.created_at) - 2440587.5) * 86400000) AS INTEGER) - n * ${options.spacingSeconds * 1000} AS ms
        FROM counter JOIN clone_templates k ON k.k = n % ${options.templateIds.length} JOIN test_run_sets s ON s.id = k.id)
      INSERT INTO clones (n, id, template, ms) SELECT n, ${uuidv7('ms')}, template, ms FROM timed`);
    const insertSets = db.prepare(`INSERT INTO test_run_sets (${setColumns.join(', ')}) SELECT ${setValues.join(', ')} FROM clones c JOIN test_run_sets t ON t.id = c.template`);
    const insertRuns = db.prepare(`INSERT INTO test_runs (${runColumns.join(', ')}) SELECT ${runValues.join(', ')} FROM clones c JOIN test_runs t ON t.set_id = c.template`);
    // Secondary indexes are dropped while loading and built again after (a sort, not
    // millions of random inserts): the finished store has exactly the indexes it had.
    const indexes = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('test_run_sets', 'test_runs')`).all() as { name: string; sql: string }[];
    for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
    const chunk = options.chunk ?? 50_000;
    for (let from = 1; from <= options.clones; from += chunk) {
      const to = Math.min(options.clones, from + chunk - 1);
      db.transaction(() => {
        db.exec('DELETE FROM clones');
        fillClones.run(from, to);
        insertSets.run();
        insertRuns.run();
      })();
      options.onProgress?.(to);
    }
    for (const { sql } of indexes) db.exec(sql);
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
}

export async function clonePostgresHistory(databaseUrl: string, schema: string, options: CloneOptions): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const columns = async (table: string) =>
      (
        await client.query<{ column_name: string }>(
          `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND is_identity = 'NO' AND is_generated = 'NEVER' ORDER BY ordinal_position`,
          [schema, table],
        )
      ).rows.map((r) => r.column_name);
    const pgTime = (column: string) => `t.${column} - c.n * interval '${options.spacingSeconds} seconds'`;
    const setColumns = await columns('test_run_sets');
    const setValues = setColumns.map((c) => (c === 'id' ? 'c.id' : SET_TIMES.includes(c) ? pgTime(c) : `t.${c}`));
    const runColumns = await columns('test_runs');
    // A random UUID with its first 48 bits replaced by the clone's creation time in ms, version 7.
    const uuidv7 = (ms: string) =>
      `overlay(overlay(gen_random_uuid()::text placing substr(lpad(to_hex(${ms}), 12, '0'), 1, 8) || '-' || substr(lpad(to_hex(${ms}), 12, '0'), 9, 4) from 1 for 13) placing '7' from 15 for 1)`;
    const runValues = runColumns.map((c) => (c === 'id' ? uuidv7('c.ms') : c === 'set_id' ? 'c.id' : RUN_TIMES.includes(c) ? pgTime(c) : `t.${c}`));
    const quoted = (names: string[]) => names.map((n) => `"${n}"`).join(', ');
    const indexes = (
      await client.query<{ indexname: string; indexdef: string }>(
        `SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = $1 AND i.tablename IN ('test_run_sets', 'test_runs')
           AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.connamespace = $1::regnamespace)`,
        [schema],
      )
    ).rows;
    for (const { indexname } of indexes) await client.query(`DROP INDEX ${schema}."${indexname}"`);
    const chunk = options.chunk ?? 100_000;
    for (let from = 1; from <= options.clones; from += chunk) {
      const to = Math.min(options.clones, from + chunk - 1);
      await client.query('BEGIN');
      await client.query(`SET LOCAL synchronous_commit = off`);
      await client.query(
        `CREATE TEMP TABLE clones ON COMMIT DROP AS
           SELECT n, ${uuidv7('ms')} AS id, template, ms FROM (
             SELECT n, k.template, (extract(epoch FROM s.created_at) * 1000)::bigint - n::bigint * ${options.spacingSeconds * 1000} AS ms
             FROM generate_series($1::int, $2::int) AS n
             CROSS JOIN LATERAL (SELECT ($3::text[])[1 + n % array_length($3::text[], 1)] AS template) k
             JOIN ${schema}.test_run_sets s ON s.id = k.template) timed`,
        [from, to, options.templateIds],
      );
      await client.query(`INSERT INTO ${schema}.test_run_sets (${quoted(setColumns)}) SELECT ${setValues.join(', ')} FROM clones c JOIN ${schema}.test_run_sets t ON t.id = c.template`);
      await client.query(`INSERT INTO ${schema}.test_runs (${quoted(runColumns)}) SELECT ${runValues.join(', ')} FROM clones c JOIN ${schema}.test_runs t ON t.set_id = c.template`);
      await client.query('COMMIT');
      options.onProgress?.(to);
    }
    await client.query(`SET maintenance_work_mem = '1GB'`);
    for (const { indexdef } of indexes) await client.query(indexdef);
    await client.query(`ANALYZE ${schema}.test_run_sets`);
    await client.query(`ANALYZE ${schema}.test_runs`);
  } finally {
    await client.end();
  }
}
