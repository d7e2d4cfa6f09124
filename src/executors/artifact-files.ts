/**
 * Files a test leaves that become its member's artifacts, the same for every
 * executor that keeps them (framework shares, `command` entries): the files an
 * `artifacts:` glob matches that a run wrote, their content types, and names
 * unique within one member. Whether a file may be read at all is decided where
 * it is stored (src/artifacts/take.ts).
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { ArtifactFile } from '../core/types.js';

/** Most files one member keeps through `artifacts:` globs: a glob that matches a whole folder of logs must not upload thousands. */
export const MAX_FILES = 100;

/** Names of one member's artifacts (every executor's), each unique: `shot.png`, `shot-2.png`; `trace-retry1.zip` with a suffix. */
export class ArtifactNames {
  private readonly taken = new Set<string>();

  /** `name` made safe for a file name, without `ext` if it ends so, then `suffix`, then `ext`; `-2`, `-3` for more of one name. */
  next(name: string, ext = '', suffix = ''): string {
    const safe = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'attachment';
    const stem = `${ext !== '' && safe.endsWith(ext) ? safe.slice(0, -ext.length) : safe}${suffix}`;
    let unique = `${stem}${ext}`;
    for (let n = 2; this.taken.has(unique); n++) unique = `${stem}-${n}${ext}`;
    this.taken.add(unique);
    return unique;
  }
}

/** A few types by extension, for a body attachment whose name has none (its type picks one). */
const EXTENSIONS: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'image/svg+xml': '.svg',
  'text/plain': '.txt',
  'text/html': '.html',
  'text/csv': '.csv',
  'application/json': '.json',
  'application/xml': '.xml',
  'application/pdf': '.pdf',
  'application/zip': '.zip',
  'video/webm': '.webm',
};

/** By extension: the above the other way round, and a few more kinds of text (masked for secrets as text is). */
const CONTENT_TYPES: Record<string, string> = {
  ...Object.fromEntries(Object.entries(EXTENSIONS).map(([type, ext]) => [ext, type])),
  '.jpeg': 'image/jpeg',
  '.htm': 'text/html',
  '.log': 'text/plain',
  '.md': 'text/markdown',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.ndjson': 'application/x-ndjson',
};

/** The extension for a file of `contentType` that came without a name of its own ('' when unknown). */
export function extensionOf(contentType: string): string {
  return EXTENSIONS[contentType] ?? '';
}

/** The content type of a file by its extension, for a file the suite left without saying (`artifacts:`). */
export function contentTypeOf(file: string): string {
  const ext = path.extname(file).toLowerCase();
  return CONTENT_TYPES[ext] ?? 'application/octet-stream';
}

/** Files under `dir` matching `patterns` and modified at or after `since` (ms since the epoch): what the share wrote. */
export async function filesWritten(patterns: readonly string[], dir: string, since: number): Promise<string[]> {
  // tinyglobby loads with the first artifact looked for, not at every worker's start (~0.03 s of CPU).
  const { glob } = await import('tinyglobby');
  // Symbolic links are neither followed nor matched: a glob never wanders out of the suite's folder.
  const files = await glob([...patterns], { cwd: dir, absolute: true, onlyFiles: true, dot: true, followSymbolicLinks: false });
  const fresh: string[] = [];
  for (const file of files.sort()) {
    const info = await lstat(file).catch(() => undefined);
    // A second of slack: some file systems keep whole seconds.
    if (info && info.mtimeMs >= since - 1000) fresh.push(file);
  }
  return fresh;
}

/**
 * The files `patterns` match under `dir` that were written since `since`, as
 * one member's artifacts (at most MAX_FILES, named by `names`), and a line for
 * its output naming those left, if any.
 */
export async function writtenArtifacts(patterns: readonly string[], dir: string, since: number, names: ArtifactNames): Promise<{ artifacts: ArtifactFile[]; note?: string }> {
  const files = await filesWritten(patterns, dir, since);
  return keepFiles(files, dir, names, 0);
}

/** `files` as artifacts after `already` kept ones, at most MAX_FILES in all; the line naming those left. */
export function keepFiles(files: readonly string[], dir: string, names: ArtifactNames, already: number): { artifacts: ArtifactFile[]; note?: string } {
  const kept = files.slice(0, Math.max(0, MAX_FILES - already));
  const artifacts = kept.map((file) => ({ name: names.next(path.basename(file), path.extname(file)), contentType: contentTypeOf(file), path: file }));
  if (kept.length === files.length) return { artifacts };
  const over = files.slice(kept.length).map((file) => path.relative(dir, file));
  return { artifacts, note: `runset: artifacts: ${over.length} more file(s) past ${MAX_FILES} for this test not kept: ${over.slice(0, 5).join(', ')}${over.length > 5 ? ', …' : ''}` };
}
