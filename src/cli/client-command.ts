/**
 * What the CLI's small client commands (`workers`, `cancel`) share: a client
 * from the environment, and one line on stderr with exit 3 for any failure.
 * Loaded by them only when they run, so their `--help` never loads the client.
 */
import type { RunsetClient } from '../client/client.js';
import { connectFromEnv } from '../client/connect.js';
import { RunsetApiError } from '../client/errors.js';
import { describe } from '../client/trigger.js';
import { EXIT_CODES, TriggerFailure, type TriggerEnv, type TriggerIo } from '../client/trigger-context.js';
import { VERSION } from '../core/version.js';

export async function runClientCommand(
  env: TriggerEnv,
  io: TriggerIo,
  fetch: typeof globalThis.fetch | undefined,
  work: (client: RunsetClient) => Promise<void>,
): Promise<number> {
  try {
    await work(connectFromEnv(env, { fetch, userAgent: `runset-cli/${VERSION}` }));
    return EXIT_CODES.success;
  } catch (error) {
    const message = error instanceof TriggerFailure ? error.message : error instanceof RunsetApiError ? describe(error) : (error as Error).message;
    io.stderr.write(`runset: error: ${message}\n`);
    return EXIT_CODES.error;
  }
}
