/**
 * Work that several callers wait on at once (unpacking one version, installing
 * one lockfile's dependencies): started by the first, joined by the others.
 * Each caller may stop waiting (its own abort signal) without stopping the
 * others; the work itself is aborted only when every caller has stopped waiting.
 */
interface Running<T> {
  promise: Promise<T>;
  waiters: number;
  abort: AbortController;
}

export class SharedWork<T> {
  private readonly running = new Map<string, Running<T>>();

  /** The result of `work` for `key`, started now unless it is already under way. */
  join(key: string, work: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(reasonOf(signal));
    let run = this.running.get(key);
    // Work every caller stopped waiting for is being stopped: a new caller starts it anew.
    if (!run || run.abort.signal.aborted) {
      const abort = new AbortController();
      const started: Running<T> = { waiters: 0, abort, promise: Promise.resolve().then(() => work(abort.signal)) };
      void started.promise.finally(() => {
        if (this.running.get(key) === started) this.running.delete(key);
      }).catch(() => undefined);
      this.running.set(key, (run = started));
    }
    const joined = run;
    joined.waiters++;
    return new Promise<T>((resolve, reject) => {
      let left = false;
      const leave = (): void => {
        if (left) return;
        left = true;
        signal?.removeEventListener('abort', onAbort);
        if (--joined.waiters === 0) joined.abort.abort(signal?.reason);
      };
      const onAbort = (): void => {
        leave();
        reject(reasonOf(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      joined.promise.then(
        (value) => {
          leave();
          resolve(value);
        },
        (err: unknown) => {
          leave();
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }
}

function reasonOf(signal: AbortSignal | undefined): Error {
  return signal?.reason instanceof Error ? signal.reason : new Error(`stopped: ${String(signal?.reason ?? 'aborted')}`);
}
