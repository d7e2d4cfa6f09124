/**
 * The one-line error of a run stopped by its AbortSignal. The caller (the
 * worker) aborts with a string reason such as "timed out after 120s" or
 * "worker shutting down"; that reason is what the user should read.
 */
export function abortMessage(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (typeof reason === 'string' && reason !== '') return `aborted: ${reason}`;
  // AbortSignal.timeout() and abort() without a reason give a DOMException whose message still says why.
  if (reason instanceof Error && reason.name !== 'AbortError' && reason.message !== '') return `aborted: ${reason.message}`;
  return 'aborted';
}
