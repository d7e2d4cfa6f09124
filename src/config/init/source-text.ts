/**
 * Reading a repository's files for `runset init`, bounded: a file larger than
 * MAX_FILE_BYTES is not read (a bundle or a fixture, not a config), and JS/TS
 * text is read without its comments, so a commented-out `webServer` or
 * `process.env.X` of a generated config is not taken for a real one.
 */
import { readFileSync, statSync } from 'node:fs';

/** Larger files are not scanned: configs and test files are far smaller. */
export const MAX_FILE_BYTES = 256 * 1024;

/** The file's text, or undefined when it is too large or cannot be read. */
export function readSmallFile(file: string): string | undefined {
  try {
    if (statSync(file).size > MAX_FILE_BYTES) return undefined;
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * JS/TS (or Python, with `#`) source with its comments blanked out, string
 * literals kept whole: `'http://x'` keeps its `//`. Regular expression
 * literals are not recognised (a `//` inside one would blank the rest of its
 * line: a missed variable, never an invented one).
 */
export function withoutComments(text: string, python = false): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    const next = text[i + 1];
    if (ch === '"' || ch === "'" || ch === '`') {
      const end = stringEnd(text, i, ch);
      out += text.slice(i, end);
      i = end;
    } else if ((python && ch === '#') || (!python && ch === '/' && next === '/')) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (!python && ch === '/' && next === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close === -1 ? text.length : close + 2;
      out += ' ';
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** The index just past the string literal opened by `quote` at `start` (a line end closes a '…' or "…" that was never closed). */
function stringEnd(text: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\\') i += 2;
    else if (ch === quote) return i + 1;
    else if (ch === '\n' && quote !== '`') return i;
    else i++;
  }
  return i;
}
