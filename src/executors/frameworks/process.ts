/**
 * A framework's process (a share's run, a listing) started through the one
 * path of every test process (../test-process.ts), told what differs: the
 * program (Node running the package's CLI, or the adapter's own program, as
 * pytest's interpreter) and the mark its processes carry.
 */
import { runTestProcess, type TestProcessExit, type TestProcessOptions } from '../test-process.js';
import type { FrameworkInstall } from './locate.js';

/** In the environment of every process a framework run starts: one mark per run. */
const MARK_ENV = 'RUNSET_FRAMEWORK_MARK';

export type FrameworkExit = TestProcessExit;

export type FrameworkProcessOptions = Omit<TestProcessOptions, 'name' | 'markEnv' | 'beforeStart'> & { deadlineMs: number };

/** Runs `args` with `install` to its end: stopped at once on abort or past its deadline. */
export function runFramework(install: FrameworkInstall, args: readonly string[], opts: FrameworkProcessOptions): Promise<FrameworkExit> {
  const [program, all] = install.program === undefined ? [process.execPath, [install.cli, ...args]] : [install.program, args];
  return runTestProcess(program, all, { ...opts, name: 'it', markEnv: MARK_ENV });
}
