/**
 * How a long-running command stops on SIGTERM and SIGINT, for `serve`, direct
 * workers and workers over HTTP alike: the first signal stops gracefully, a
 * second stops at once and the process exits within 2 s whatever is left.
 */
import type { Logger } from 'pino';

/** Exit 0 once `stop` resolves, 1 when it fails. */
export function stopOnSignals(stop: (graceMs: number) => Promise<void>, graceMs: number, logger: Pick<Logger, 'info' | 'error'>): void {
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    logger.info({ signal }, signals === 1 ? 'stopping gracefully' : 'stopping now');
    if (signals > 1) setTimeout(() => process.exit(0), 2000).unref();
    stop(signals === 1 ? graceMs : 0).then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
