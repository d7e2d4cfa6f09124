/**
 * The writing end of the live channel, loaded inside a framework's process by
 * runset's reporters (./vitest-reporter.ts, ./jest-reporter.ts,
 * ./cucumber-reporter.ts; ./mocha-reporter.cts, CommonJS, has its own): one JSON line
 * per event, appended synchronously to the file named in the environment, for
 * the reasons ../playwright/reporter.ts gives (every event arrives, in order,
 * even when the process exits right after). Node builtins only: it runs in
 * whichever framework the suite installed.
 */
import { openSync, writeSync } from 'node:fs';
import { REPORTER_FILE_ENV } from '../playwright/reporter.js';
import type { LiveEvent } from './live-events.js';

export class LiveWriter {
  /** Without the variable (the suite's own config names this reporter outside runset) nothing is written. */
  private readonly fd: number | undefined;

  constructor() {
    const file = process.env[REPORTER_FILE_ENV];
    this.fd = file ? openSync(file, 'a') : undefined;
    this.send({ type: 'ready' }); // the framework constructs its reporters once it has started (../live-tracker.ts: the start guard)
  }

  send(event: LiveEvent): void {
    if (this.fd === undefined) return;
    const line = Buffer.from(JSON.stringify(event) + '\n');
    for (let offset = 0; offset < line.length; ) offset += writeSync(this.fd, line, offset);
  }
}
