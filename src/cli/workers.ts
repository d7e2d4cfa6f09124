/**
 * `runset workers`: the live worker processes, through the API (RUNSET_URL,
 * RUNSET_API_KEY), so it answers the same from any machine and on either store.
 * A table for people, `--json` for scripts. Exit 3 on any error, like trigger.
 */
import type { Command } from 'commander';
import type { TriggerEnv, TriggerIo } from '../client/trigger-context.js';
import type { Worker } from '../client/types.js';
import { formatDuration } from '../core/duration.js';
import { alignedTable } from './table.js';

/** Running members named in the table before "+N more". */
const NAMES_SHOWN = 2;

export function registerWorkersCommand(program: Command): void {
  program
    .command('workers')
    .description('list the live worker processes and what each runs (needs RUNSET_URL and RUNSET_API_KEY)')
    .option('--json', 'print the list as JSON')
    .addHelpText('after', '\nEnvironment:\n  RUNSET_URL      base address of the runset API, ending in /api\n  RUNSET_API_KEY  API key (never printed)')
    .action(async (flags: { json?: boolean }) => {
      process.exitCode = await runWorkers(flags.json === true, process.env, { stdout: process.stdout, stderr: process.stderr });
    });
}

export async function runWorkers(json: boolean, env: TriggerEnv, io: TriggerIo, fetch?: typeof globalThis.fetch): Promise<number> {
  const { runClientCommand } = await import('./client-command.js');
  return runClientCommand(env, io, fetch, async (client) => {
    const workers = await client.listWorkers();
    io.stdout.write(json ? `${JSON.stringify(workers, null, 2)}\n` : workersTable(workers, Date.now()));
  });
}

/** One line per worker, columns aligned; what it runs last (the longest column). */
export function workersTable(workers: readonly Worker[], now: number): string {
  if (workers.length === 0) return 'no live workers (start `runset serve` or `runset worker`)\n';
  const since = (iso: string) => (iso ? formatDuration(Math.max(0, now - Date.parse(iso))) : '-');
  const rows = [
    ['WORKER', 'HOST', 'PID', 'BUSY', 'HELD', 'UP', 'SEEN', 'RUNNING'],
    ...workers.map((w) => [
      w.id,
      w.host,
      String(w.pid),
      `${w.running.length}/${w.slots}`,
      String(w.held),
      since(w.startedAt),
      `${since(w.heartbeatAt)} ago`,
      running(w),
    ]),
  ];
  return alignedTable(rows);
}

function running(worker: Worker): string {
  if (worker.running.length === 0) return '-';
  const names = worker.running.slice(0, NAMES_SHOWN).map((r) => r.name);
  const more = worker.running.length - names.length;
  return names.join(', ') + (more > 0 ? ` +${more} more` : '');
}
