/**
 * The action's state between its main and post steps, through the runner's
 * files: a step appends `name=value` lines to the file named by GITHUB_STATE,
 * and the runner gives them to the post step as `STATE_name` variables.
 */
import { appendFile } from 'node:fs/promises';
import { outputLines } from '../client/reports/github.js';

/** The id of the set the main step created. */
export const SET_ID_STATE = 'set-id';
/** Present when the main step saw its trigger flow to the end (whatever the exit code): nothing left for the post step. */
export const ENDED_STATE = 'ended';

type Env = Readonly<Record<string, string | undefined>>;

/** Saves state for the post step; without GITHUB_STATE (run outside a runner) there is none to keep. */
export async function saveState(env: Env, values: Record<string, string>): Promise<void> {
  const file = env.GITHUB_STATE;
  if (file) await appendFile(file, outputLines(values), 'utf8');
}

export function readState(env: Env, name: string): string | undefined {
  const value = env[`STATE_${name}`];
  return value === undefined || value === '' ? undefined : value;
}
