/**
 * Ignore files read as git reads them (gitignore(5), git's dir.c and
 * wildmatch.c), so a suite's archive holds what `git check-ignore` says is not
 * ignored. One pattern is matched against one path only: whether a folder
 * above it was left out is the walker's business (./walk.ts never enters a
 * folder that is, which is git's "a file cannot be re-included if a parent
 * directory is excluded"). The `ignore` package folds parents into every
 * verdict, so `dist/` + `!/dist` there still left out everything under `dist/`.
 *
 * - a line: `#` starts a comment; a `\r` before its end and unescaped trailing
 *   spaces go; `!` negates; `\` escapes the next character;
 * - a trailing `/` matches folders only; a pattern with no other `/` matches a
 *   name at any depth below the file's folder, else the path from that folder
 *   (a leading `/` only anchors);
 * - `*`, `?` and `[…]` never match `/`; `**` matches across folders only as a
 *   whole part: `**\/x`, `x/**\/y`, `x/**`; elsewhere it is `*`.
 */

/** One pattern of an ignore file, compiled. */
export interface IgnoreRule {
  /** The folder of its file, relative to the suite's root ('' for the root). */
  base: string;
  /** Its file, relative to the root, and line number (1-based): what a message names. */
  file: string;
  line: number;
  text: string;
  negative: boolean;
  dirOnly: boolean;
  /** Matched against the last part of a path only. */
  basename: boolean;
  regex: RegExp;
}

/** The rules of one ignore file's text, in order. */
export function parseIgnoreFile(text: string, base: string, file: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  lines.forEach((raw, index) => {
    const line = trimTrailingSpaces(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
    if (line === '' || line.startsWith('#')) return;
    let pattern = line;
    const negative = pattern.startsWith('!');
    if (negative) pattern = pattern.slice(1);
    const dirOnly = pattern.endsWith('/');
    if (dirOnly) pattern = pattern.slice(0, -1);
    if (pattern === '') return;
    const basename = !pattern.includes('/');
    if (pattern.startsWith('/')) pattern = pattern.slice(1);
    rules.push({ base, file, line: index + 1, text: line, negative, dirOnly, basename, regex: new RegExp(`^${globSource(pattern)}$`, 's') });
  });
  return rules;
}

/** Git's verdict from `rules` (lowest precedence first) for `inside` (a path from the root, no trailing `/`): the rule that decides, if any. */
export function decidingRule(rules: readonly IgnoreRule[], inside: string, isFolder: boolean): IgnoreRule | undefined {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i] as IgnoreRule;
    if (rule.dirOnly && !isFolder) continue;
    if (rule.base !== '' && !inside.startsWith(`${rule.base}/`)) continue;
    const relative = rule.base === '' ? inside : inside.slice(rule.base.length + 1);
    const subject = rule.basename ? relative.slice(relative.lastIndexOf('/') + 1) : relative;
    if (rule.regex.test(subject)) return rule;
  }
  return undefined;
}

/** git's trim_trailing_spaces: spaces at the end go unless the last is escaped. */
function trimTrailingSpaces(line: string): string {
  let end = line.length;
  while (end > 0 && line[end - 1] === ' ') {
    let slashes = 0;
    for (let i = end - 2; i >= 0 && line[i] === '\\'; i--) slashes++;
    if (slashes % 2 === 1) break;
    end--;
  }
  return line.slice(0, end);
}

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/g;

function literal(char: string): string {
  return char.replace(REGEX_SPECIAL, '\\$&');
}

/** A character inside a regular expression's class. */
function classLiteral(char: string): string {
  return char.replace(/[\\\][^-]/g, '\\$&');
}

/** The regular expression source of a wildmatch pattern under WM_PATHNAME. */
function globSource(pattern: string): string {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i] as string;
    if (char === '\\') {
      // A trailing backslash matches nothing, as in wildmatch.
      if (i + 1 >= pattern.length) return '(?!)';
      out += literal(pattern[i + 1] as string);
      i += 2;
    } else if (char === '*') {
      let stars = 1;
      while (pattern[i + stars] === '*') stars++;
      const wholePart = stars === 2 && (i === 0 || pattern[i - 1] === '/');
      const next = pattern[i + stars];
      if (wholePart && next === '/') {
        out += '(?:.*/)?';
        i += stars + 1;
      } else if (wholePart && next === undefined) {
        out += '.*';
        i += stars;
      } else {
        out += '[^/]*';
        i += stars;
      }
    } else if (char === '?') {
      out += '[^/]';
      i++;
    } else if (char === '[') {
      const found = bracket(pattern, i);
      if (found === undefined) {
        out += '\\[';
        i++;
      } else {
        out += found.source;
        i = found.end;
      }
    } else {
      out += literal(char);
      i++;
    }
  }
  return out;
}

const POSIX_CLASSES: Record<string, string> = {
  alnum: 'a-zA-Z0-9', alpha: 'a-zA-Z', blank: ' \\t', cntrl: '\\x00-\\x1f\\x7f', digit: '0-9', graph: '\\x21-\\x7e',
  lower: 'a-z', print: '\\x20-\\x7e', punct: '!-\\/:-@\\[-`{-~', space: ' \\t\\n\\r\\f\\v', upper: 'A-Z', xdigit: '0-9a-fA-F',
};

/** A `[…]` class from `start` (its `[`): its source and the index after its `]`, or undefined when it never closes. */
function bracket(pattern: string, start: number): { source: string; end: number } | undefined {
  let i = start + 1;
  let negated = false;
  if (pattern[i] === '!' || pattern[i] === '^') {
    negated = true;
    i++;
  }
  let body = '';
  let first = true;
  while (i < pattern.length) {
    const char = pattern[i] as string;
    if (char === ']' && !first) {
      // Under WM_PATHNAME no class matches '/'.
      return { source: negated ? `[^/${body}]` : `(?!/)[${body}]`, end: i + 1 };
    }
    first = false;
    if (char === '[' && pattern[i + 1] === ':') {
      const close = pattern.indexOf(':]', i + 2);
      const name = close < 0 ? undefined : pattern.slice(i + 2, close);
      if (name !== undefined && name in POSIX_CLASSES) {
        body += POSIX_CLASSES[name];
        i = close + 2;
        continue;
      }
      if (name !== undefined) return { source: '(?!)', end: pattern.length }; // an unknown class: wildmatch matches nothing
    }
    if (char === '\\' && i + 1 < pattern.length) {
      body += classLiteral(pattern[i + 1] as string);
      i += 2;
      continue;
    }
    if (pattern[i + 1] === '-' && pattern[i + 2] !== undefined && pattern[i + 2] !== ']') {
      const to = pattern[i + 2] === '\\' ? pattern[i + 3] : pattern[i + 2];
      if (to === undefined) return undefined;
      if (char <= to) body += `${classLiteral(char)}-${classLiteral(to)}`; // a reversed range matches nothing

      i += pattern[i + 2] === '\\' ? 4 : 3;
      continue;
    }
    body += classLiteral(char);
    i++;
  }
  return undefined;
}
