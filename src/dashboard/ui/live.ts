/**
 * Live updates by polling: the page asks the list/status endpoints again every
 * second or so while it is visible and something is still moving. Polling (not
 * SSE) because it works through every proxy, needs no open connection per tab
 * on the API processes, and the endpoints it reads are the cheap ones.
 */
import { useEffect, useRef } from 'preact/hooks';

export const POLL_MS = 1000;

/**
 * Calls `load` now and then every `intervalMs` while `active`, the tab is
 * visible and the previous call has finished (no pile-up on a slow server).
 * `deps` restart it (new filters, another set).
 */
export function usePoll(load: (signal: AbortSignal) => Promise<void>, deps: unknown[], active = true, intervalMs = POLL_MS): void {
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const controller = new AbortController();
    let timer: number | undefined;
    let stopped = false;
    const tick = async () => {
      if (stopped) return;
      if (document.visibilityState === 'visible') {
        try {
          await loadRef.current(controller.signal);
        } catch {
          // The page shows its last good data; the next tick tries again.
        }
      }
      if (!stopped && active) timer = window.setTimeout(() => void tick(), intervalMs);
    };
    const onVisible = () => {
      if (document.visibilityState === 'visible' && active) {
        window.clearTimeout(timer);
        void tick();
      }
    };
    void tick();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      controller.abort();
      window.clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [...deps, active, intervalMs]);
}
