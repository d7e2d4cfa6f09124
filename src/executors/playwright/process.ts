/**
 * The Playwright runner as a child process, started through the one path of
 * every test process (../test-process.ts), told what differs: Node running
 * Playwright's CLI, the mark its processes carry, and its reporter's events,
 * followed in the event file (../event-log.ts) line by line.
 */
import { EventLog } from '../event-log.js';
import { runTestProcess, type TestProcessExit, type TestProcessOptions } from '../test-process.js';
import { playwrightAdapter } from './adapter.js';
import { REPORTER_FILE_ENV, type ReporterEvent } from './reporter.js';

/** In the runner's environment, so every process it starts carries it: Playwright stops its webServer and browsers when it exits, not when it is killed. */
const BATCH_MARK_ENV = 'RUNSET_BATCH_MARK';

/** Runs Playwright's CLI with `args` to its end, its reporter's events handed to `onEvent` as they are written. */
export function runPlaywright(
  cli: string,
  args: readonly string[],
  opts: Pick<TestProcessOptions, 'cwd' | 'env' | 'runAs' | 'containment' | 'beforeStart' | 'signal'> & {
    eventFile: string;
    onEvent: (event: ReporterEvent) => void;
  },
): Promise<TestProcessExit> {
  let events: EventLog<ReporterEvent>;
  try {
    events = new EventLog(opts.eventFile, opts.onEvent);
  } catch (error) {
    const message = `cannot make the reporter's event file ${opts.eventFile}: ${(error as Error).message}`;
    return Promise.resolve({ code: null, signal: null, log: message });
  }
  const { cwd, env, runAs, containment, beforeStart, signal } = opts;
  return runTestProcess(process.execPath, [cli, ...args], {
    name: playwrightAdapter.title,
    markEnv: BATCH_MARK_ENV,
    cwd,
    env: { ...env, [REPORTER_FILE_ENV]: opts.eventFile },
    runAs,
    containment,
    events,
    signal,
    // Called once the event file exists: the run's folder becomes the test user's.
    beforeStart,
  });
}
