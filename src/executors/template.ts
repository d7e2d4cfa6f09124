/**
 * `{{NAME}}` placeholders, as used in HTTP checks (url, header values, body).
 *
 * Everything between `{{` and `}}` is a placeholder; spaces inside the braces
 * are allowed (`{{ BASE_URL }}`). There is no escape and no default value on
 * purpose: a placeholder that cannot be filled is an error, never an empty
 * string, so a typo cannot send a request to `/health` instead of
 * `https://staging…/health`. The config loader uses `findPlaceholders` to
 * reject undeclared names at load; `substitute` re-checks at run time because
 * overrides and secrets are only known then.
 */

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface Placeholder {
  /** The placeholder as written, braces included. */
  raw: string;
  /** The variable it names; undefined when the text inside the braces is not a valid name. */
  name: string | undefined;
}

export class TemplateError extends Error {
  /** The variable (or the malformed placeholder text) at fault. */
  readonly variable: string;
  constructor(message: string, variable: string) {
    super(message);
    this.name = 'TemplateError';
    this.variable = variable;
  }
}

export function findPlaceholders(text: string): Placeholder[] {
  const found: Placeholder[] = [];
  for (const match of text.matchAll(PLACEHOLDER)) {
    const inner = (match[1] ?? '').trim();
    found.push({ raw: match[0], name: VARIABLE_NAME.test(inner) ? inner : undefined });
  }
  return found;
}

/** Replaces every `{{NAME}}` in `text`; throws a TemplateError naming an unknown or malformed one. */
export function substitute(text: string, variables: Readonly<Record<string, string>>): string {
  if (!text.includes('{{')) return text;
  return text.replace(PLACEHOLDER, (raw, inner: string) => {
    const name = inner.trim();
    if (!VARIABLE_NAME.test(name)) {
      throw new TemplateError(`malformed placeholder ${raw}: expected {{NAME}} with NAME made of letters, digits and _`, raw);
    }
    // hasOwn, not `in`: a variable called `constructor` must not resolve to Object.prototype's.
    if (!Object.hasOwn(variables, name)) {
      const known = Object.keys(variables).sort().join(', ') || 'none';
      throw new TemplateError(`variable "${name}" is not defined (defined: ${known})`, name);
    }
    return variables[name] as string;
  });
}

/**
 * Substitutes inside a JSON-like value: every string, at any depth of objects
 * and arrays, is passed through `substitute`. Keys and non-string scalars are
 * kept as they are. Returns a new value; the input is not modified.
 */
export function substituteDeep(value: unknown, variables: Readonly<Record<string, string>>): unknown {
  if (typeof value === 'string') return substitute(value, variables);
  if (Array.isArray(value)) return value.map((item) => substituteDeep(item, variables));
  if (value !== null && typeof value === 'object') {
    // fromEntries defines keys, so a "__proto__" key in a body stays a key instead of setting a prototype.
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substituteDeep(item, variables)]));
  }
  return value;
}
