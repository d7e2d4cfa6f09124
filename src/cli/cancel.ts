/**
 * `runset cancel ID`: cancels a set through the API (RUNSET_URL,
 * RUNSET_API_KEY, like `trigger`). Exit 0 when the set is ended — by this
 * command, or before it — and 3 on any error.
 */
import type { Command } from 'commander';
import type { TriggerEnv, TriggerIo } from '../client/trigger-context.js';

export function registerCancelCommand(program: Command): void {
  program
    .command('cancel')
    .description('cancel a test run set: its unfinished tests end FAIL ("cancelled"), and so does the set (needs RUNSET_URL and RUNSET_API_KEY)')
    .argument('<id>', 'the test run set id (from `runset trigger`)')
    .option('--json', 'print the set\'s status and "cancelled" as JSON')
    .action(async (id: string, flags: { json?: boolean }) => {
      process.exitCode = await runCancel(id, flags.json === true, process.env, { stdout: process.stdout, stderr: process.stderr });
    });
}

export async function runCancel(id: string, json: boolean, env: TriggerEnv, io: TriggerIo, fetch?: typeof globalThis.fetch): Promise<number> {
  const { runClientCommand } = await import('./client-command.js');
  return runClientCommand(env, io, fetch, async (client) => {
    const result = await client.cancelTestRunSet(id);
    if (json) io.stdout.write(`${JSON.stringify(result)}\n`);
    const counts = result.progress.counts;
    io.stderr.write(
      result.cancelled
        ? `runset: cancelled test run set ${id}: ${result.status}, ${counts.SUCCESS} passed, ${counts.FAIL} failed or cancelled\n`
        : `runset: test run set ${id} had already ended ${result.status}; nothing changed\n`,
    );
  });
}
