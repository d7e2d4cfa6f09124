/**
 * The start guard of a framework share that reports live: runset's reporter
 * says `ready` as the framework constructs it (./live-writer.ts,
 * ./mocha-reporter.cts), which every framework does once it has loaded its
 * config and before it runs any test file or hook of the suite. A process
 * that has not said even that within PROCESS_START_MS (../test-process.ts) is stuck starting (a
 * config that waits on stdin or a port, an install that never finishes
 * resolving, a hung loader): it is stopped and its members fail saying so,
 * instead of staying WAITING, held, until the share's deadline (a minute plus
 * every case's timeout: five minutes at the defaults).
 *
 * Only before `ready`: what comes after it (a globalSetup that starts
 * services, collecting a big suite) may legitimately take long, and is left
 * to the cases' own timeouts and the share's deadline. Shares without a live
 * reporter (Vitest 2, Newman, pytest) say nothing before their end, so they
 * have no guard.
 */

export class StartGuard {
  private readonly stopper = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private heardAny = false;

  constructor(readonly limitMs: number) {
    this.timer = setTimeout(() => this.stopper.abort('silent'), limitMs);
    this.timer.unref();
  }

  /** Aborted when the process stayed silent past the limit: what stops it. */
  get signal(): AbortSignal {
    return this.stopper.signal;
  }

  /** Something came from the reporter: the process started; the guard is done. */
  heard(): void {
    this.heardAny = true;
    clearTimeout(this.timer);
  }

  /** The process was stopped for its silence (and not for anything else). */
  get tripped(): boolean {
    return this.stopper.signal.aborted && !this.heardAny;
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
