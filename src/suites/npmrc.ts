/**
 * A suite's `.npmrc`: its npm settings travel with it (the worker's `npm ci`
 * needs them: `legacy-peer-deps=true`, a registry, `engine-strict`), its
 * credentials never do. One rule, applied where a suite is packed (the lines
 * are left out of the archive, and the CLI names them) and again where a
 * worker installs (an archive packed by other means).
 *
 * A credential line: any setting for one registry (`//host/path/:key`, how npm
 * scopes `_authToken`, `_auth`, `username`, `_password`, certificates), the
 * bare `_auth`, `_authToken`, `_password`, `username`, `password`,
 * `certfile`, `keyfile` keys (a scope prefix `@scope:` included), and any value
 * that is a URL carrying a user or password (`registry=https://u:p@host/`).
 */

export const NPMRC = '.npmrc';

const CREDENTIAL_KEYS = new Set(['_auth', '_authtoken', '_password', 'username', 'password', 'certfile', 'keyfile']);

export interface NpmSettings {
  /** The file without its credential lines. */
  text: string;
  /** What was left out, by key and line number: never a value. */
  dropped: string[];
}

export function projectNpmSettings(text: string): NpmSettings {
  const kept: string[] = [];
  const dropped: string[] = [];
  text.split('\n').forEach((line, index) => {
    const key = keyOf(line);
    if (key !== undefined && isCredential(key, line)) dropped.push(`line ${index + 1} (${key})`);
    else kept.push(line);
  });
  return { text: kept.join('\n'), dropped };
}

/** The key of a `key = value` line; undefined for comments and blank lines. */
function keyOf(line: string): string | undefined {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) return undefined;
  const eq = trimmed.indexOf('=');
  return (eq < 0 ? trimmed : trimmed.slice(0, eq)).trim();
}

function isCredential(key: string, line: string): boolean {
  if (key.startsWith('//')) return true;
  const bare = key.replace(/^@[^:]+:/, '').toLowerCase();
  if (CREDENTIAL_KEYS.has(bare)) return true;
  const value = line.slice(line.indexOf('=') + 1).trim();
  return /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*@/i.test(value);
}
