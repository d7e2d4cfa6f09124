/**
 * Reading a Dockerfile and a .dockerignore the way the builder does, for the
 * checks in test/deploy/dockerfile.test.ts: instructions with their line
 * continuations joined and comments dropped; ignore rules matched as Docker
 * matches them (`*` within a path segment, `**` across segments, `!` to keep
 * again, the last matching rule deciding, a matched folder taking its contents).
 */
export interface Instruction {
  keyword: string;
  args: string;
}

export function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') && pending === '') continue;
    if (line.startsWith('#')) continue; // a comment inside a continued instruction
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    if (whole === '') continue;
    const m = /^([A-Za-z]+)\s*(.*)$/.exec(whole);
    if (m) out.push({ keyword: m[1]!.toUpperCase(), args: m[2]!.trim() });
  }
  return out;
}

function patternRegex(pattern: string): RegExp {
  const p = pattern.replace(/^\/+|\/+$/g, '');
  let body = '';
  for (let i = 0; i < p.length; i++) {
    if (p.startsWith('**/', i)) {
      body += '(?:.*/)?';
      i += 2;
    } else if (p.startsWith('**', i)) {
      body += '.*';
      i += 1;
    } else if (p[i] === '*') body += '[^/]*';
    else if (p[i] === '?') body += '[^/]';
    else body += p[i]!.replace(/[.+^${}()|[\]\\]/, '\\$&');
  }
  return new RegExp(`^${body}$`);
}

/** Whether `.dockerignore` (its text) leaves `file` (relative to the context) out of the build context. */
export function dockerIgnored(ignore: string, file: string): boolean {
  const rules = ignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => (l.startsWith('!') ? { keep: true, re: patternRegex(l.slice(1).trim()) } : { keep: false, re: patternRegex(l) }));
  const parts = file.split('/');
  let ignored = false;
  for (const rule of rules) {
    // A rule matching the file or any folder above it applies to the file.
    for (let n = 1; n <= parts.length; n++) {
      if (rule.re.test(parts.slice(0, n).join('/'))) {
        ignored = !rule.keep;
        break;
      }
    }
  }
  return ignored;
}
