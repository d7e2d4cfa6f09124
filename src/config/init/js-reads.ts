/**
 * The environment reads of JS/TS source (comments already blanked out, see
 * ./source-text.ts), for `runset init`:
 *   - `process.env.NAME`, `process.env['NAME']`, then maybe a default
 *     (`?? 'text'`, `|| "text"`, `|| 3000`);
 *   - `import.meta.env.NAME`, `import.meta.env['NAME']` (Vite, Vitest), the same;
 *   - destructuring: `const { NAME, OTHER = 'x', THIRD: local } = process.env`
 *     (or `= import.meta.env`), the property names, with their default values.
 *
 * Only names of variables: never a method (`process.env.hasOwnProperty('X')`),
 * a name the code sets or deletes (`process.env.X = …`, `delete process.env.X`),
 * a rest element or local alias of a destructuring, a computed name
 * (`process.env[`X_${i}`]`), or what Vite itself puts in `import.meta.env`
 * (MODE, BASE_URL, PROD, DEV, SSR). What is not recognised is missed, never invented.
 */

/** A read of one variable, with the default the code gives it, if a plain string or number. */
export interface EnvRead {
  name: string;
  fallback?: string;
}

/** `process.env` or `import.meta.env`, not `foo.process.env`; group `object`. */
const ENV = String.raw`(?<![\w$.])(?<object>process|import\.meta)\.env`;
/** What follows a name that is not read: a call, an assignment (`==`, `===` and `??=` are reads). */
const NOT_READ_AFTER = String.raw`(?!\s*(?:\(|=(?!=)))`;
/** A default beside the read: groups q, text, number. */
const FALLBACK = String.raw`(?:\s*(?:\?\?|\|\|)\s*(?:(?<q>['"\x60])(?<text>[^'"\x60\n]*)\k<q>|(?<number>\d+(?:\.\d+)?)\b))?`;

const READS = [
  new RegExp(String.raw`(?<!\bdelete\s+)${ENV}\.(?<name>[A-Za-z_$][\w$]*)(?![\w$])${NOT_READ_AFTER}${FALLBACK}`, 'g'),
  new RegExp(String.raw`(?<!\bdelete\s+)${ENV}\[\s*(?<q0>['"\x60])(?<name>[^'"\x60\n]+)\k<q0>\s*\]${NOT_READ_AFTER}${FALLBACK}`, 'g'),
];
/** `{ … } = process.env` (a type annotation between allowed), not `= process.env.X`: groups body, object. */
const DESTRUCTURING = new RegExp(String.raw`\{(?<body>[^{}]*)\}\s*(?::[^=;{}()]+)?=\s*${ENV}(?![\w$.\[?])`, 'g');
/** One property of a destructuring: `NAME`, `'NAME'`, then maybe `: local`, then maybe `= default`. */
const PROPERTY = /^(?:(?<q0>['"])(?<quoted>[^'"\n]+)\k<q0>|(?<bare>[A-Za-z_$][\w$]*))\s*(?::\s*[A-Za-z_$][\w$]*\s*)?(?:=\s*(?<value>[\s\S]+))?$/;
const LITERAL = /^(?:(?<q>['"`])(?<text>[^'"`\n]*)\k<q>|(?<number>\d+(?:\.\d+)?))$/;

/** Properties every object has: `process.env.hasOwnProperty` is no variable. */
const OBJECT_PROPERTIES = new Set(Object.getOwnPropertyNames(Object.prototype));
/** What Vite sets in `import.meta.env` itself (https://vite.dev/guide/env-and-mode). */
const VITE_BUILT_INS = new Set(['MODE', 'BASE_URL', 'PROD', 'DEV', 'SSR']);

/** The variables `code` reads, in the order they appear. */
export function jsReads(code: string): EnvRead[] {
  const reads: Array<EnvRead & { at: number }> = [];
  const add = (at: number, object: string | undefined, name: string, text: string | undefined): void => {
    if (name.includes('${') || OBJECT_PROPERTIES.has(name) || (object === 'import.meta' && VITE_BUILT_INS.has(name))) return;
    // A template's `${PORT}` would reach the tests as those very characters: no default then.
    const fallback = text === undefined || text.includes('${') ? undefined : text;
    reads.push({ at, name, ...(fallback === undefined ? {} : { fallback }) });
  };
  for (const pattern of READS) {
    for (const m of code.matchAll(pattern)) add(m.index, m.groups?.object, m.groups?.name as string, m.groups?.text ?? m.groups?.number);
  }
  for (const m of code.matchAll(DESTRUCTURING)) {
    for (const property of topLevelParts(m.groups?.body as string)) {
      const p = PROPERTY.exec(property)?.groups;
      if (p === undefined) continue; // `...rest`, `[computed]: x`, a nested pattern
      const value = p.value === undefined ? undefined : LITERAL.exec(p.value.trim())?.groups;
      add(m.index, m.groups?.object, (p.quoted ?? p.bare) as string, value?.text ?? value?.number);
    }
  }
  return reads.sort((a, b) => a.at - b.at).map(({ at: _at, ...read }) => read);
}

/** `text` split at its commas outside brackets, parentheses and strings, each part trimmed, empty ones dropped. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quote !== '') {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'" || ch === '`') quote = ch;
    else if (ch === '(' || ch === '[') depth++;
    else if (ch === ')' || ch === ']') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}
