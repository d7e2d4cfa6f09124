/**
 * --run-as's users per slot, apart from ./isolation.ts: the CLI parses options
 * through that file before it knows which command runs, and this one brings in
 * the slot users' machinery (useradd, process-tree kills), which only a process
 * that runs tests needs.
 */
import { RunAsError, type RunAsUser } from '../executors/run-as.js';
import { slotUsers, TestUsers } from '../executors/test-users.js';
import { OptionError } from './options.js';

/** Under --run-as, a user per worker slot (USER-1 … USER-N, made when missing); an OptionError saying what to create when they cannot be had. */
export function testUsersFor(runAs: RunAsUser | undefined, slots: number): TestUsers | undefined {
  if (!runAs) return undefined;
  try {
    return new TestUsers(slotUsers(runAs, slots));
  } catch (error) {
    if (error instanceof RunAsError) throw new OptionError(`--run-as (RUNSET_RUN_AS): ${error.message}`);
    throw error;
  }
}
