/**
 * A client from the environment, for the CLI's client commands (`trigger`,
 * `workers`): RUNSET_URL and RUNSET_API_KEY only, never flags, so a key does
 * not end up in shell history or process lists.
 */
import { RunsetClient } from './client.js';
import { EXIT_CODES, TriggerFailure, type TriggerDeps, type TriggerEnv } from './trigger-context.js';

export function connectFromEnv(env: TriggerEnv, deps: TriggerDeps): RunsetClient {
  const url = env.RUNSET_URL?.trim();
  if (!url) throw new TriggerFailure(EXIT_CODES.error, 'RUNSET_URL is not set: set it to the base address of the runset API, ending in /api (e.g. https://runset.example.com/api)');
  const apiKey = env.RUNSET_API_KEY;
  if (!apiKey) throw new TriggerFailure(EXIT_CODES.error, 'RUNSET_API_KEY is not set: set it to a runset API key, kept in your CI secret store');
  if (!/^https?:\/\//i.test(url)) throw new TriggerFailure(EXIT_CODES.error, 'RUNSET_URL must be an http:// or https:// address ending in /api');
  try {
    return new RunsetClient({ url, apiKey, fetch: deps.fetch, userAgent: deps.userAgent ?? 'runset-cli' });
  } catch (cause) {
    throw new TriggerFailure(EXIT_CODES.error, 'RUNSET_URL is not a valid URL (expected the base address ending in /api)', { cause });
  }
}
