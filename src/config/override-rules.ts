/**
 * Constrained overrides: a variable may say which override values it accepts,
 * as globs (`allow`) and/or a regular expression (`pattern`), each matched
 * against the whole value. Pure: config loading checks the rules' syntax,
 * planning checks the values.
 *
 * Why runset's own glob and not picomatch: picomatch's `*` stops only at `/`,
 * so `https://*.preview.example.com` would accept
 * `https://evil.example#.preview.example.com` or `https://evil.example\.preview.example.com`
 * — URLs whose host is evil.example. Here `*` also stops at `?`, `#`, `@`, `\`
 * and whitespace, the characters that end or re-route a URL's host, so a `*`
 * in a host stays inside the host. `**` matches anything, for paths after a
 * fixed host (`https://staging.example.com/**`).
 */
import type { OverrideRule } from '../core/types.js';

const ONE_PART = '[^/?#@\\\\\\s]*';
const ANYTHING = '[\\s\\S]*';

export const GLOB_SYNTAX = '* for any characters but / ? # @ \\ and spaces, ** for any characters';

/** The regular expression of a glob, anchored on the whole value. `\\` escapes the next character. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index] as string;
    if (char === '\\' && index + 1 < glob.length) {
      source += escapeRegExp(glob[++index] as string);
    } else if (char === '*') {
      const double = glob[index + 1] === '*';
      if (double) while (glob[index + 1] === '*') index++;
      source += double ? ANYTHING : ONE_PART;
    } else {
      source += escapeRegExp(char);
    }
  }
  return new RegExp(`^${source}$`, 'u');
}

/** `pattern` as a regular expression on the whole value; throws SyntaxError when it is not one. */
export function patternToRegExp(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`, 'u');
}

/** What is wrong with a rule as written, or null (for config loading). */
export function ruleSyntaxError(rule: OverrideRule): string | null {
  if (rule.pattern === null) return null;
  try {
    patternToRegExp(rule.pattern);
    return null;
  } catch (error) {
    return `pattern ${JSON.stringify(rule.pattern)} is not a valid regular expression (${(error as Error).message})`;
  }
}

const compiled = new WeakMap<OverrideRule, RegExp[]>();

/** True when `value` matches one of the rule's globs or its pattern. */
export function ruleAllows(rule: OverrideRule, value: string): boolean {
  let tests = compiled.get(rule);
  if (!tests) {
    tests = [...rule.allow.map(globToRegExp), ...(rule.pattern === null ? [] : [patternToRegExp(rule.pattern)])];
    compiled.set(rule, tests);
  }
  return tests.some((test) => test.test(value));
}

/** The allowed forms, for messages: `one of the globs "a", "b" (…) or the pattern /…/`. */
export function describeRule(rule: OverrideRule): string {
  const parts: string[] = [];
  if (rule.allow.length > 0) {
    parts.push(`${rule.allow.length === 1 ? 'the glob' : 'one of the globs'} ${rule.allow.map((glob) => JSON.stringify(glob)).join(', ')} (${GLOB_SYNTAX})`);
  }
  if (rule.pattern !== null) parts.push(`the regular expression ${JSON.stringify(rule.pattern)} (on the whole value)`);
  return `a value matching ${parts.join(', or ')}`;
}

/**
 * Why an override of `name` with `value` is refused, or null when the rule
 * allows it. A secret variable's value is never quoted.
 */
export function overrideRefusal(name: string, value: string, rule: OverrideRule, secret: boolean): string | null {
  if (ruleAllows(rule, value)) return null;
  const shown = secret ? 'the value' : JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value);
  return `envOverride.${name}: ${shown} is not an override ${name} allows; allowed: ${describeRule(rule)}`;
}

function escapeRegExp(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char;
}
