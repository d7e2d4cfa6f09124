/**
 * The SQLite side of the suite versions sub-store (../suite-versions.ts): versions, their
 * names, and which are no longer used. Archives' bytes are files under
 * `<data dir>/suites/` (src/main.ts), never in this file.
 */
import type Database from 'better-sqlite3';
import { SUITE_ID, type SuiteVersionInfo } from '../../core/suites.js';
import type { TestSpec } from '../../core/types.js';
import { rowMappers, type SuiteVersionRow } from '../rows.js';
import type { NewSuiteVersion, SuiteVersionsStore } from '../suite-versions.js';
import { settle } from './settle.js';
import { now } from './statements.js';

/** SQLite returns timestamps as the ISO strings they were written as. */
const { toSuiteVersion } = rowMappers<string>((value) => value);

/** A version with how many sets ran it and when the newest was created (the partial index on test_run_sets.suite serves both). */
const VERSION_COLUMNS = `
  v.id, v.size, v.files, v.source_commit, v.location, v.created_at,
  (SELECT count(*) FROM test_run_sets s WHERE s.suite = v.id) AS sets,
  (SELECT max(s.created_at) FROM test_run_sets s WHERE s.suite = v.id) AS last_set_at`;

type Statement = 'insert' | 'get' | 'ranIn' | 'list' | 'tests' | 'exists' | 'byName' | 'namesOf' | 'allNames' | 'setName' | 'removeUnused';

export class SqliteSuiteVersions implements SuiteVersionsStore {
  private readonly sql: Record<Statement, Database.Statement>;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      insert: db.prepare(`
        INSERT INTO suite_versions (id, size, files, source_commit, tests, location, created_at)
        VALUES (@id, @size, @files, @commit, @tests, @location, @created_at)
        ON CONFLICT (id) DO NOTHING`),
      get: db.prepare(`SELECT ${VERSION_COLUMNS} FROM suite_versions v WHERE v.id = ?`),
      // Through the partial index test_run_sets_suite.
      ranIn: db.prepare('SELECT 1 FROM test_run_sets WHERE suite = ? AND env IN (SELECT value FROM json_each(?)) LIMIT 1').pluck(),
      list: db.prepare(`SELECT ${VERSION_COLUMNS} FROM suite_versions v ORDER BY v.created_at DESC, v.id`),
      tests: db.prepare('SELECT tests FROM suite_versions WHERE id = ?'),
      exists: db.prepare('SELECT 1 FROM suite_versions WHERE id = ?'),
      byName: db.prepare('SELECT version_id FROM suite_names WHERE name = ?'),
      namesOf: db.prepare('SELECT name FROM suite_names WHERE version_id = ? ORDER BY name'),
      allNames: db.prepare('SELECT name, version_id FROM suite_names ORDER BY name'),
      setName: db.prepare(`
        INSERT INTO suite_names (name, version_id, updated_at) VALUES (?, ?, ?)
        ON CONFLICT (name) DO UPDATE SET version_id = excluded.version_id, updated_at = excluded.updated_at`),
      removeUnused: db.prepare(`
        DELETE FROM suite_versions AS v
        WHERE v.created_at < ?
          AND NOT EXISTS (SELECT 1 FROM test_run_sets s WHERE s.suite = v.id)
          AND NOT EXISTS (SELECT 1 FROM suite_names n WHERE n.version_id = v.id)
        RETURNING id, location`),
    };
  }

  ranIn(id: string, envs: readonly string[]): Promise<boolean> {
    return settle(() => this.sql.ranIn.get(id, JSON.stringify(envs)) !== undefined);
  }

  put(version: NewSuiteVersion): Promise<{ created: boolean }> {
    return settle(() => {
      const { changes } = this.sql.insert.run({
        id: version.id,
        size: version.size,
        files: version.files,
        commit: version.commit,
        tests: JSON.stringify(version.tests),
        location: version.location,
        created_at: now(),
      });
      return { created: changes === 1 };
    });
  }

  get(id: string): Promise<(SuiteVersionInfo & { location: string }) | undefined> {
    return settle(() => {
      const row = this.sql.get.get(id) as SuiteVersionRow<string> | undefined;
      return row && toSuiteVersion(row, (this.sql.namesOf.all(id) as { name: string }[]).map((n) => n.name));
    });
  }

  tests(id: string): Promise<readonly TestSpec[] | undefined> {
    return settle(() => {
      const row = this.sql.tests.get(id) as { tests: string } | undefined;
      return row && (JSON.parse(row.tests) as TestSpec[]);
    });
  }

  resolve(idOrName: string): Promise<string | undefined> {
    return settle(() => {
      if (SUITE_ID.test(idOrName) && this.sql.exists.get(idOrName)) return idOrName;
      return (this.sql.byName.get(idOrName) as { version_id: string } | undefined)?.version_id;
    });
  }

  setName(name: string, id: string): Promise<void> {
    return settle(() => {
      // Checked here for a clear error rather than the foreign key's.
      if (!this.sql.exists.get(id)) throw new Error(`no suite version ${id}: upload it before naming it`);
      this.sql.setName.run(name, id, now());
    });
  }

  list(): Promise<SuiteVersionInfo[]> {
    return settle(() => {
      const names = new Map<string, string[]>();
      for (const { name, version_id } of this.sql.allNames.all() as { name: string; version_id: string }[]) {
        const of = names.get(version_id);
        if (of) of.push(name);
        else names.set(version_id, [name]);
      }
      return (this.sql.list.all() as SuiteVersionRow<string>[]).map((row) => {
        const { location: _location, ...info } = toSuiteVersion(row, names.get(row.id) ?? []);
        return info;
      });
    });
  }

  removeUnused(before: Date): Promise<Array<{ id: string; location: string }>> {
    return settle(() => this.sql.removeUnused.all(before.toISOString()) as Array<{ id: string; location: string }>);
  }
}
