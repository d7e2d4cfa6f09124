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
    // randomblob() is evaluated per row (a non-deterministic function), so each id is fresh.
    const uuid = `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-8' || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`;
    db.exec(`CREATE TEMP TABLE clone_templates (k INTEGER PRIMARY KEY, id TEXT NOT NULL)`);
    const addTemplate = db.prepare('INSERT INTO clone_templates (k, id) VALUES (?, ?)');
    options.templateIds.forEach((id, k) => addTemplate.run(k, id));
    db.exec(`CREATE TEMP TABLE clones (n INTEGER PRIMARY KEY, id TEXT NOT NULL, template TEXT NOT NULL)`);

    const setColumns = columns('test_run_sets');
    const setValues = setColumns.map((c) => (c === 'id' ? 'c.id' : SET_TIMES.includes(c) ? sqliteTime(c) : `t.${c}`));
    const runColumns = columns('test_runs');
    const runValues = runColumns.map((c) =>
      c === 'id' ? uuid : c === 'set_id' ? 'c.id' : RUN_TIMES.includes(c) ? sqliteTime(c) : `t.${c}`,
    );
    const fillClones = db.prepare(`
      WITH RECURSIVE counter(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM counter WHERE n < ?)
      INSERT INTO clones (n, id, template)
      SELECT n, ${uuid}, (SELECT id FROM clone_templates WHERE k = n % ${options.templateIds.length})
      FROM counter`);
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
    const runValues = runColumns.map((c) => (c === 'id' ? 'gen_random_uuid()::text' : c === 'set_id' ? 'c.id' : RUN_TIMES.includes(c) ? pgTime(c) : `t.${c}`));
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
           SELECT n, gen_random_uuid()::text AS id, ($3::text[])[1 + n % array_length($3::text[], 1)] AS template
           FROM generate_series($1::int, $2::int) AS n`,
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
