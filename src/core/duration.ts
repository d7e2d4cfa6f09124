/**
 * Durations as people type them on a command line or in a config file:
 * `250ms`, `0.5s`, `10s`, `10m`, `1h`, `7d`, or a plain number of seconds.
 *
 * Shared by the CLI (`trigger --interval/--timeout`) and the server, so that one
 * spelling means the same thing everywhere. Imports nothing of ours (core rule).
 */

const UNIT_MS = Object.freeze({ ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const);
type Unit = keyof typeof UNIT_MS;

/** What every duration error says is accepted, so the fix is in the message. */
export const DURATION_HELP = 'a number of seconds, or a number followed by ms, s, m, h or d (e.g. 250ms, 0.5s, 10s, 10m, 1h, 7d)';

/**
 * Larger values overflow Node's timers (they fire at once with a warning), so a
 * typo such as `10000h` is rejected here rather than misbehaving later. Callers
 * that never arm a timer with the value (an artifact retention of `90d`) may
 * pass a larger maximum.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

const PATTERN = /^(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d)?$/;

export class DurationError extends Error {
  readonly input: string;
  constructor(input: string, reason: string) {
    super(`invalid duration ${JSON.stringify(input)}: ${reason}; expected ${DURATION_HELP}`);
    this.name = 'DurationError';
    this.input = input;
  }
}

/** Parses a duration into whole milliseconds (rounded); throws DurationError. */
export function parseDuration(input: string, maxMs: number = MAX_DURATION_MS): number {
  const text = input.trim().toLowerCase();
  const match = PATTERN.exec(text);
  if (!match) throw new DurationError(input, 'not a duration');
  const amount = Number(match[1]);
  const unit = (match[2] ?? 's') as Unit;
  const ms = Math.round(amount * UNIT_MS[unit]);
  if (!Number.isFinite(ms) || ms > maxMs) {
    throw new DurationError(input, `longer than the maximum of ${formatDuration(maxMs)}`);
  }
  return ms;
}

/**
 * A short human form for messages: `250ms`, `4.2s`, `12s`, `3m 05s`, `1h 02m`.
 * Seconds keep one decimal below 10 s, where the difference is still visible.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  const totalSeconds = Math.floor(ms / 1000);
  if (totalSeconds < 60) return `${totalSeconds}s`;
  const totalMinutes = Math.floor(totalSeconds / 60);
  const seconds = String(totalSeconds % 60).padStart(2, '0');
  if (totalMinutes < 60) return seconds === '00' ? `${totalMinutes}m` : `${totalMinutes}m ${seconds}s`;
  const hours = Math.floor(totalMinutes / 60);
  const minutes = String(totalMinutes % 60).padStart(2, '0');
  return minutes === '00' ? `${hours}h` : `${hours}h ${minutes}m`;
}
