/**
 * The GitHub Action (action.yml), bundled by esbuild into action/runset.mjs:
 * the runner's own Node runs it with nothing installed (src/action/build.ts).
 *
 * main: the inputs become `runset trigger --wait` arguments (./inputs.ts) and
 * the CLI's trigger flow runs in-process: it creates the set, follows it,
 * writes the step summary, the outputs and the annotations, and picks the exit
 * code; a SIGINT or SIGTERM (the runner cancelling the job) cancels the set.
 * The set's id is saved for the post step as soon as it exists.
 *
 * post: runs after the job's steps even when the job was cancelled. When the
 * main step never reached its end (killed before it could cancel), it cancels
 * the set, so a cancelled job leaves no tests holding workers.
 */
import { connectFromEnv } from '../client/connect.js';
import { RunsetApiError } from '../client/errors.js';
import { redactingSink } from '../client/redact.js';
import { escapeData } from '../client/reports/github.js';
import { describe } from '../client/trigger.js';
import { EXIT_CODES, TriggerFailure, type TriggerIo } from '../client/trigger-context.js';
import { runTriggerCommand } from '../cli/trigger.js';
import { VERSION } from '../core/version.js';
import { missingInputs, readInput, triggerInvocation } from './inputs.js';
import { ENDED_STATE, readState, saveState, SET_ID_STATE } from './state.js';

type Env = Readonly<Record<string, string | undefined>>;

const USER_AGENT = `runset-action/${VERSION}`;
/** A cancelled job's post step has minutes, but a stuck server must not hold it that long. */
const POST_CANCEL_TIMEOUT_MS = 15_000;

const processIo: TriggerIo = { stdout: process.stdout, stderr: process.stderr };

export async function main(env: Env = process.env, io: TriggerIo = processIo): Promise<number> {
  const missing = missingInputs(env);
  if (missing.length > 0) {
    io.stderr.write(`runset: error: the step's \`with:\` needs ${missing.map((name) => `\`${name}\``).join(', ')} (exit ${EXIT_CODES.error})\n`);
    return EXIT_CODES.error;
  }
  const { argv, env: clientEnv } = triggerInvocation(env);
  const code = await runTriggerCommand(argv, { ...env, ...clientEnv }, io, {
    userAgent: USER_AGENT,
    // Without the id the post step cannot clean up after a killed main step; the set itself is fine, so the step goes on.
    onCreated: (id) =>
      saveState(env, { [SET_ID_STATE]: id }).catch((error: unknown) => {
        io.stderr.write(`runset: warning: could not save the set's id for the post step (${error instanceof Error ? error.message : String(error)}); a job killed now leaves the set running\n`);
      }),
  });
  await saveState(env, { [ENDED_STATE]: 'true' }).catch(() => undefined);
  return code;
}

export async function post(env: Env = process.env, io: TriggerIo = processIo): Promise<number> {
  const key = readInput(env, 'api-key');
  const stderr = redactingSink(io.stderr, [key]);
  const id = readState(env, SET_ID_STATE);
  if (id === undefined) {
    stderr.write('runset: no test run set was created; nothing to clean up\n');
    return EXIT_CODES.success;
  }
  if (readState(env, ENDED_STATE) !== undefined) {
    stderr.write(`runset: the main step saw test run set ${id} to its end; nothing to clean up\n`);
    return EXIT_CODES.success;
  }
  try {
    const client = connectFromEnv({ RUNSET_URL: readInput(env, 'url'), RUNSET_API_KEY: key }, { userAgent: USER_AGENT });
    const result = await client.cancelTestRunSet(id, { signal: AbortSignal.timeout(POST_CANCEL_TIMEOUT_MS) });
    stderr.write(result.cancelled ? `runset: the job stopped before the set ended: cancelled test run set ${id}\n` : `runset: test run set ${id} had already ended ${result.status}\n`);
    return EXIT_CODES.success;
  } catch (error) {
    const why = error instanceof RunsetApiError ? describe(error) : error instanceof TriggerFailure ? error.message : String(error);
    // A warning, not a failed step: the job's verdict was already given by its main step.
    stderr.write(`::warning title=runset::${escapeData(`could not cancel test run set ${id}: ${why}`)}\n`);
    return EXIT_CODES.success;
  }
}
