/**
 * SIGINT and SIGTERM while `trigger --wait` follows a set: the CI job is being
 * cancelled (a newer commit, someone pressed Cancel). The wait is aborted so
 * the trigger can cancel its set instead of leaving it to hold workers and
 * browsers for nothing. A second signal aborts the cancel request too.
 */
export const INTERRUPTS = ['SIGINT', 'SIGTERM'] as const;
export type InterruptSignal = (typeof INTERRUPTS)[number];

/** Where signals come from: the process, or an EventEmitter in tests. */
export interface SignalSource {
  on(event: InterruptSignal, listener: () => void): unknown;
  off(event: InterruptSignal, listener: () => void): unknown;
}

export class Interrupted extends Error {
  constructor(readonly signalName: InterruptSignal) {
    super(`received ${signalName}`);
    this.name = 'Interrupted';
  }
}

export interface InterruptWatch {
  /** Aborted (reason: Interrupted) at the first signal. */
  readonly signal: AbortSignal;
  /** Aborted at the second: stop the cancel request too. */
  readonly again: AbortSignal;
  dispose(): void;
}

export function watchInterrupts(source: SignalSource): InterruptWatch {
  const first = new AbortController();
  const second = new AbortController();
  const handlers = INTERRUPTS.map((name) => {
    const handler = () => (first.signal.aborted ? second.abort(new Interrupted(name)) : first.abort(new Interrupted(name)));
    source.on(name, handler);
    return [name, handler] as const;
  });
  return {
    signal: first.signal,
    again: second.signal,
    dispose: () => {
      for (const [name, handler] of handlers) source.off(name, handler);
    },
  };
}
