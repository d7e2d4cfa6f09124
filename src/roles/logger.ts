/**
 * The process's logger: pino at the asked level, credentials redacted. Apart
 * from src/main.ts so that a worker over HTTP (src/cli/http-worker.ts), which
 * holds no store and serves no API, takes its logger without loading them.
 * pino's one door: `npm run build` bundles this file with pino into one module
 * (src/core/door-bundles.ts), which loads in half the CPU of pino's own.
 */
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.token', 'token'], censor: '[redacted]' },
  });
}
