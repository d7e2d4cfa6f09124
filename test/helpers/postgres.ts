/**
 * PostgreSQL for tests: the shared test database (RUNSET_TEST_DATABASE_URL), one
 * schema per test dropped afterwards, direct reads of store state, and a private
 * throwaway cluster for tests that must stop the server (never the shared one).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { RunState } from '../../src/core/states.js';
import { newToken } from '../../src/auth/keys.js';
import { Fleet, pidAlive } from './fleet.js';
import { until } from './scale.js';

export const TEST_DATABASE_URL = process.env.RUNSET_TEST_DATABASE_URL || undefined;
export const NO_DATABASE = 'RUNSET_TEST_DATABASE_URL is not set';

/** A fresh schema name (the CLI creates it on start through its migrations). */
export function newSchemaName(prefix = 'runset_t'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** One statement on a short-lived connection. */
export async function query<T extends pg.QueryResultRow = Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, statement_timeout: 20_000 });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

export async function dropSchemas(url: string, schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url, statement_timeout: 20_000 });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema.replace(/"/g, '""')}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Member rows as the store holds them (worker, claims, lost leases): state the API does not show. */
/** A store a server test runs on: its `serve` arguments, and how to drop what it made. */
export interface ServedStore {
  args: string[];
  drop: () => Promise<void>;
}

/**
 * The stores an end-to-end test runs on, by name: SQLite (the server's default),
 * and PostgreSQL on a fresh schema named after `prefix` when RUNSET_TEST_DATABASE_URL is set.
 */
export function servedStores(prefix: string): Array<[string, () => ServedStore]> {
  const url = TEST_DATABASE_URL;
  const sqlite: [string, () => ServedStore] = ['SQLite', () => ({ args: [], drop: () => Promise.resolve() })];
  if (!url) return [sqlite];
  const postgres = (): ServedStore => {
    const schema = newSchemaName(prefix);
    return { args: ['--database-url', url, '--database-schema', schema], drop: () => dropSchemas(url, [schema]) };
  };
  return [sqlite, ['PostgreSQL', postgres]];
}

export interface MemberRow {
  id: string;
  set_id: string;
  name: string;
  status: RunState;
  worker_id: string | null;
  claims: number;
  lost_leases: number;
  output: string | null;
}

export function memberRows(url: string, schema: string, setId?: string): Promise<MemberRow[]> {
  const where = setId === undefined ? '' : 'WHERE set_id = $1';
  return query<MemberRow>(
    url,
    `SELECT id, set_id, name, status, worker_id, claims, lost_leases, output FROM "${schema}".test_runs ${where} ORDER BY set_id, position`,
    setId === undefined ? [] : [setId],
  );
}

// ── a private cluster ──

/** The initdb of the newest installed PostgreSQL, or on PATH; undefined when there is none. */
export function findPgBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(path.join(root, v, 'bin', 'initdb'))) return path.join(root, v, 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? path.dirname(which.stdout.trim()) : undefined;
}

/** Why a private cluster cannot be made here, or undefined when it can. */
export function privateClusterUnavailable(): string | undefined {
  const bin = findPgBin();
  if (!bin) return 'initdb (PostgreSQL server binaries) is not installed';
  if (process.getuid?.() === 0) {
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    if (id.status !== 0) return 'running as root and there is no "postgres" user to run initdb as';
    if (!existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser')) return 'running as root and runuser is not available';
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(5499 + Math.floor(Math.random() * 2000), '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A throwaway PostgreSQL cluster in a temp dir, owned by and run as the
 * `postgres` OS user when we are root (initdb refuses root), trust auth, on a
 * free local port, its unix socket inside the temp dir.
 */
export class PrivateCluster {
  private constructor(
    readonly bin: string,
    readonly dir: string,
    readonly port: number,
    private readonly asUser: string | undefined,
  ) {}

  get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async create(): Promise<PrivateCluster> {
    const bin = findPgBin();
    if (!bin) throw new Error('no initdb');
    const root = process.getuid?.() === 0;
    const dir = mkdtempSync(path.join(tmpdir(), 'runset-pg-'));
    if (root) {
      const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      chownSync(dir, uid, gid);
    }
    for (let tries = 0; ; tries++) {
      const cluster = new PrivateCluster(bin, dir, await freePort(), root ? 'postgres' : undefined);
      if (tries === 0) cluster.run('initdb', ['-D', cluster.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
      try {
        cluster.start();
        return cluster;
      } catch (err) {
        if (tries >= 2) {
          cluster.destroy();
          throw err;
        }
      }
    }
  }

  /** Runs one of the cluster's programs (as the postgres user when root); throws with its output on failure. */
  private run(program: string, args: string[]): string {
    const exe = path.join(this.bin, program);
    // A clean environment: no test tags, nothing of ours leaks into the server processes.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C' };
    const res = this.asUser
      ? spawnSync('runuser', ['-u', this.asUser, '--', exe, ...args], { env, encoding: 'utf8', timeout: 60_000 })
      : spawnSync(exe, args, { env, encoding: 'utf8', timeout: 60_000 });
    if (res.status !== 0) throw new Error(`${program} ${args.join(' ')} failed (${res.status ?? res.signal}):\n${res.stdout}${res.stderr}`);
    return res.stdout;
  }

  private pgCtl(args: string[]): void {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
    this.run('pg_ctl', ['-D', this.dataDir, '-l', path.join(this.dir, 'server.log'), '-w', '-t', '30', '-o', options, ...args]);
  }

  start(): void {
    this.pgCtl(['start']);
  }

  /** Stops the server; `fast` disconnects every client (what a restart does). */
  stop(mode: 'fast' | 'immediate' = 'fast'): void {
    this.pgCtl(['stop', '-m', mode]);
  }

  /** The postmaster's pid while it runs. */
  postmasterPid(): number | undefined {
    try {
      return Number(readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  }

  serverLog(): string {
    try {
      return readFileSync(path.join(this.dir, 'server.log'), 'utf8');
    } catch {
      return '';
    }
  }

  /** Stops the server if it runs (immediate) and deletes everything; throws if the server would not stop. */
  destroy(): void {
    const pid = this.postmasterPid();
    if (pid !== undefined && pidAlive(pid)) {
      try {
        this.stop('immediate');
      } catch {
        process.kill(pid, 'SIGKILL');
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
    if (pid !== undefined && pidAlive(pid)) throw new Error(`the private PostgreSQL (pid ${pid}) is still running`);
  }
}

/**
 * A fleet of runset processes on a fresh schema of the test database, torn down
 * after the test with its schema and its folder `dir`.
 */
export function fleetOnFreshSchema(t: TestContext, prefix: string, configPath: string, dir: string): { fleet: Fleet; schema: string } {
  const schema = newSchemaName(prefix);
  const fleet = new Fleet({ databaseUrl: TEST_DATABASE_URL!, schema, configPath, apiKey: newToken() });
  t.after(async () => {
    try {
      await fleet.teardown(5000);
    } finally {
      await dropSchemas(TEST_DATABASE_URL!, [schema]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return { fleet, schema };
}

/** Waits until `n` workers are in the registry of `schema`: shares are sized from the live ones. */
export async function workersRegistered(schema: string, n: number): Promise<void> {
  await until(`${n} workers registered`, async () => {
    const [row] = await query<{ n: number }>(TEST_DATABASE_URL!, `SELECT count(*)::integer AS n FROM "${schema}".workers`);
    return row?.n === n;
  });
}
