/**
 * The options that keep a worker's credentials away from the tests it runs:
 * `--run-as USER` (RUNSET_RUN_AS) and the worker's key, from RUNSET_API_KEY or
 * `--key-file PATH` (RUNSET_API_KEY_FILE). A key is never printed, logged or
 * put in an error message; only the file's path is.
 */
import { readFileSync, statSync } from 'node:fs';
import { lookUpRunAsUser, RunAsError, type RunAsUser } from '../executors/run-as.js';
import { OptionError } from './options.js';

/** --run-as: undefined when unset (or empty); else the user, or an OptionError saying what is accepted. */
export function parseRunAs(raw: string | undefined): RunAsUser | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    return lookUpRunAsUser(raw.trim());
  } catch (error) {
    if (error instanceof RunAsError) throw new OptionError(`--run-as (RUNSET_RUN_AS): ${error.message}`);
    throw error;
  }
}

/**
 * The worker's API key: the file's first line when --key-file is given (it wins
 * over RUNSET_API_KEY), else the variable. Under --run-as a file every user may
 * read is refused: the test user could read it as well as runset does.
 */
export function readApiKey(keyFile: string | undefined, fromEnv: string | undefined, runAs: RunAsUser | undefined): string | undefined {
  if (!keyFile) return fromEnv || undefined;
  const name = '--key-file (RUNSET_API_KEY_FILE)';
  let text: string;
  try {
    const info = statSync(keyFile);
    if (!info.isFile()) throw new OptionError(`${name}: ${keyFile} is not a file; expected a file holding the worker's key (rs_…) on its first line`);
    if (runAs && ((info.mode & 0o004) !== 0 || info.uid === runAs.uid)) {
      throw new OptionError(`${name}: ${keyFile} can be read by --run-as's user ${runAs.name}; make it readable by runset's user alone (chmod 600, owned by that user)`);
    }
    text = readFileSync(keyFile, 'utf8');
  } catch (error) {
    if (error instanceof OptionError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new OptionError(`${name}: cannot read ${keyFile} (${code}); expected a file holding the worker's key (rs_…) on its first line`);
  }
  const key = text.split('\n')[0]?.trim() ?? '';
  if (key === '') throw new OptionError(`${name}: ${keyFile} is empty; expected the worker's key (rs_…) on its first line`);
  return key;
}
