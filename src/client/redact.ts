/**
 * The API key must never reach an output, an error or a file — also not when a
 * server (or a proxy in front of it) echoes the request back in an error body.
 * Every text the client builds from a response, and every byte the trigger
 * writes, passes through here: a last line of defence, not the only one.
 */

export const REDACTED = '***';

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    // Very short "secrets" would shred ordinary text; real keys are long.
    if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Where the trigger writes text: a stream, or a collector in tests. */
export interface TextSink {
  write(chunk: string): unknown;
  /** True for a terminal: progress is then one line rewritten in place. */
  readonly isTTY?: boolean;
}

/** A sink that cannot emit the secrets, whatever is written through it. */
export function redactingSink(sink: TextSink, secrets: readonly string[]): TextSink {
  return { isTTY: sink.isTTY === true, write: (chunk: string) => sink.write(redact(chunk, secrets)) };
}
