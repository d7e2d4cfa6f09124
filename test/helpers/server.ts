/**
 * Test helpers that start the real `runset` CLI as a child process on an
 * ephemeral port with a real SQLite data dir, and talk HTTP to it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { newToken } from '../../src/auth/keys.js';

export const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface RunningServer {
  url: string;
  apiKey: string;
  dataDir: string;
  configPath: string;
  proc: ChildProcess;
  logs: () => string;
  /** What it wrote to stderr alone. */
  stderr: () => string;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

const live = new Set<ChildProcess>();

export function tempDir(prefix = 'runset-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export interface StartOptions {
  /** YAML text of runset.config.yaml (written into a temp dir), or use configPath. */
  config?: string;
  configPath?: string;
  dataDir?: string;
  apiKey?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Extra files written beside the config: name → content. */
  files?: Record<string, string>;
}

export async function startRunset(opts: StartOptions): Promise<RunningServer> {
  const dir = tempDir();
  let configPath = opts.configPath;
  if (!configPath) {
    configPath = path.join(dir, 'runset.config.yaml');
    writeFileSync(configPath, opts.config ?? '');
  }
  for (const [name, content] of Object.entries(opts.files ?? {})) writeFileSync(path.join(path.dirname(configPath), name), content);
  const dataDir = opts.dataDir ?? path.join(dir, 'data');
  const apiKey = opts.apiKey ?? newToken();
  const proc = spawn(
    process.execPath,
    [CLI, 'serve', '--port', '0', '--config', configPath, '--data-dir', dataDir, ...(opts.args ?? [])],
    {
      env: { ...process.env, RUNSET_BOOTSTRAP_KEY: apiKey, RUNSET_LOG_LEVEL: 'warn', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  live.add(proc);
  let output = '';
  let errors = '';
  proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => {
    output += d.toString();
    errors += d.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.on('exit', (code) => {
      live.delete(proc);
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 45s:\n${output}`)), 45_000);
    const check = () => {
      const m = /API at (http:\/\/\S+\/api)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stderr.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    url,
    apiKey,
    dataDir,
    configPath,
    proc,
    logs: () => output,
    stderr: () => errors,
    exited,
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      return exited;
    },
  };
}

/** After-hook: fails when a test left a server running (and kills it). */
export function assertNoLeakedServers(): void {
  const left = [...live];
  for (const p of left) p.kill('SIGKILL');
  if (left.length > 0) throw new Error(`${left.length} runset server(s) were left running by the test`);
}

export interface ApiAnswer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function api<T = Record<string, unknown>>(
  server: { url: string; apiKey: string },
  method: string,
  route: string,
  init: { body?: unknown; rawBody?: string; headers?: Record<string, string>; auth?: string | null } = {},
): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = { ...init.headers };
  const auth = init.auth === undefined ? `Bearer ${server.apiKey}` : init.auth;
  if (auth !== null) headers.authorization = auth;
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(server.url + route, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/**
 * Waits for a set to end SUCCESS or FAIL (or throws after `timeoutMs`), asking
 * the server to hold each read until the status or a count changes (`If-None-Match`
 * with `Prefer: wait`), as the CI client does: a 50 ms poll cost the server about
 * 3 ms of CPU a read, which a suite of three files at once on two cores felt.
 */
export async function waitForSet(
  server: { url: string; apiKey: string },
  id: string,
  timeoutMs = 20_000,
): Promise<Record<string, unknown> & { status: string; progress: { counts: Record<string, number> } }> {
  type Status = { status: string; progress: { counts: Record<string, number> } };
  const until = Date.now() + timeoutMs;
  let res = await api<Status>(server, 'GET', `/v0/test-run-sets/${id}`);
  let last = res;
  for (;;) {
    if (res.status === 200) last = res;
    if (last.status !== 200) throw new Error(`GET set ${id}: ${last.status} ${last.text}`);
    if (last.body.status === 'SUCCESS' || last.body.status === 'FAIL') return last.body;
    const left = until - Date.now();
    if (left <= 0) throw new Error(`set ${id} still ${last.body.status} after ${timeoutMs}ms`);
    const etag = last.headers.get('etag');
    const asked = Date.now();
    res = await api<Status>(server, 'GET', `/v0/test-run-sets/${id}`, {
      headers: etag ? { 'if-none-match': etag, prefer: `wait=${Math.max(1, Math.min(5, Math.ceil(left / 1000)))}` } : {},
    });
    // A server that did not hold the read (no tag, or not waiting): poll as before.
    if (!etag || (res.headers.get('preference-applied') === null && Date.now() - asked < 20)) await new Promise((r) => setTimeout(r, 50));
  }
}

/** Alive = exists and is not a zombie waiting for a reaper (containers may lack one). */
export function pidAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** `runset <args>` as a CI job runs it, with the server's address and a key in its environment (none of the caller's RUNSET_ or GITHUB_ variables). */
export async function runsetCli(server: RunningServer, args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_') && !k.startsWith('GITHUB_'))), RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey };
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { env, timeout: 120_000 });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}
