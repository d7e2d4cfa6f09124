/**
 * Secret values never reach stored artifacts: text artifacts are masked like
 * run output, and a Playwright trace (a ZIP of JSON lines, network logs and DOM
 * snapshots) is opened and its text entries masked — a `fill('…')` of a
 * password is recorded in the trace verbatim otherwise.
 *
 * Values are masked as written and in the two encodings traces use for them:
 * JSON string escaping and URL encoding. Binary content (screenshots, video,
 * images inside a trace) is kept as it is: pixels cannot be masked, and a secret
 * typed into a visible field shows there as it would to a person watching.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MASK, redact } from '../secrets/index.js';
import { entryData, readZip, withData, writeZip, ZipFormatError, type ZipEntry } from './zip.js';

/** Each secret, plus its JSON-escaped and URL-encoded forms where they differ. */
export function secretVariants(secrets: readonly string[]): string[] {
  const out = new Set<string>();
  for (const secret of secrets) {
    if (secret === '') continue;
    out.add(secret);
    out.add(JSON.stringify(secret).slice(1, -1));
    out.add(encodeURIComponent(secret));
  }
  return [...out];
}

export type ScrubResult =
  | { kind: 'unchanged' }
  | { kind: 'scrubbed'; file: string }
  | { kind: 'dropped'; reason: string };

/**
 * Makes `file` (named `name`) safe to keep. Returns where the safe bytes are (a new file in
 * `workDir` when something was masked), or why it cannot be kept.
 */
export async function scrubFile(file: string, contentType: string, secrets: readonly string[], workDir: string, name = path.basename(file)): Promise<ScrubResult> {
  const variants = secretVariants(secrets);
  if (variants.length === 0) return { kind: 'unchanged' };
  const bytes = await readFile(file);
  let safe: Buffer | undefined;
  if (isZip(contentType, name)) {
    try {
      safe = scrubZip(bytes, variants);
    } catch (error) {
      if (!(error instanceof ZipFormatError)) throw error;
      return { kind: 'dropped', reason: `it could not be checked for secret values (${error.message})` };
    }
  } else if (isText(contentType) || contentType === 'application/octet-stream') {
    // A file of no known kind is masked too when its bytes are text (a `.out` log an `artifacts:` glob took).
    safe = scrubBytes(bytes, variants);
  }
  if (safe === undefined) return { kind: 'unchanged' };
  const target = path.join(workDir, `scrubbed-${name}-${process.hrtime.bigint()}`);
  await writeFile(target, safe);
  return { kind: 'scrubbed', file: target };
}

/** The archive with secrets masked in its text entries, or undefined when none holds one. */
export function scrubZip(zip: Buffer, variants: readonly string[]): Buffer | undefined {
  const entries = readZip(zip);
  let changed = false;
  const out: ZipEntry[] = entries.map((entry) => {
    // Binary entries (screencast frames, images) are kept: bytes there match a secret only by chance.
    const safe = scrubBytes(entryData(entry), variants);
    if (safe === undefined) return entry;
    changed = true;
    return withData(entry, safe);
  });
  return changed ? writeZip(out) : undefined;
}

/** Masked text, or undefined when there is nothing to mask (or the bytes are not UTF-8 text). */
export function scrubBytes(bytes: Buffer, variants: readonly string[]): Buffer | undefined {
  if (!containsAny(bytes, variants) || !looksLikeText(bytes)) return undefined;
  return Buffer.from(redact(bytes.toString('utf8'), variants));
}

function containsAny(bytes: Buffer, variants: readonly string[]): boolean {
  return variants.some((v) => bytes.includes(v, 0, 'utf8'));
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function looksLikeText(bytes: Buffer): boolean {
  if (bytes.subarray(0, 8192).includes(0)) return false;
  try {
    decoder.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function isZip(contentType: string, file: string): boolean {
  return contentType === 'application/zip' || file.endsWith('.zip');
}

function isText(contentType: string): boolean {
  return /^text\//.test(contentType) || /^application\/(json|xml|yaml|x-yaml|x-ndjson|[\w.-]+\+json|[\w.-]+\+xml)\b/.test(contentType) || contentType === 'image/svg+xml';
}

export { MASK };
