/**
 * Secret variables: how they are kept (never in clear at rest), resolved for a
 * run, and masked in everything a person can read.
 *
 * - `${env:NAME}` values stay references: each process reads its own environment
 *   when it needs the value (so every worker machine must have NAME set).
 * - Override values sent for a secret variable are sealed with AES-256-GCM under
 *   the server's secret key before they are stored.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { VariableValue } from '../core/types.js';

export const MASK = '***';

/** `${env:NAME}` as a whole value: a reference to the server's environment. */
export const ENV_REFERENCE = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** The key that seals secret override values: RUNSET_SECRET_KEY, else a file made once in the data dir. */
export function loadSecretKey(dataDir: string, fromEnv: string | undefined): Buffer {
  if (fromEnv) return createHash('sha256').update(fromEnv).digest();
  const file = path.join(dataDir, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
  }
  return createHash('sha256').update(readFileSync(file, 'utf8').trim()).digest();
}

export function seal(value: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
}

export function unseal(box: string, key: Buffer): string {
  const [version, iv, tag, body] = box.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('sealed value has an unknown format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
}

export function isSecret(value: VariableValue): boolean {
  return value.kind !== 'plain';
}

export interface ResolvedVariables {
  values: Record<string, string>;
  /** The clear values of secret variables, for masking. */
  secrets: string[];
}

export class SecretUnavailableError extends Error {}

/**
 * Turns stored variables into clear values for one run. Throws
 * SecretUnavailableError naming what is missing. Without a key (a worker over
 * HTTP) sealed values cannot be opened: the API opens them for it (`opened`).
 */
export function resolveVariables(
  variables: Readonly<Record<string, VariableValue>>,
  opts: { env: NodeJS.ProcessEnv; key: Buffer | undefined },
): ResolvedVariables {
  const values: Record<string, string> = {};
  const secrets: string[] = [];
  for (const [name, v] of Object.entries(variables)) {
    if (v.kind === 'plain') {
      values[name] = v.value;
      continue;
    }
    let clear: string;
    if (v.kind === 'opened') {
      clear = v.value;
    } else if (v.kind === 'env') {
      const found = opts.env[v.name];
      if (found === undefined) {
        throw new SecretUnavailableError(`variable ${name} reads \${env:${v.name}}, but ${v.name} is not set in this process's environment`);
      }
      clear = found;
    } else {
      if (opts.key === undefined) throw new SecretUnavailableError(`variable ${name} is sealed, and this process holds no secret key to open it (the API opens secrets for workers over HTTP)`);
      try {
        clear = unseal(v.box, opts.key);
      } catch (cause) {
        throw new SecretUnavailableError(`variable ${name} was sealed with another secret key (set the same RUNSET_SECRET_KEY on every process)`, { cause });
      }
    }
    values[name] = clear;
    if (clear.length > 0) secrets.push(clear);
  }
  return { values, secrets };
}

/** Replaces every occurrence of every secret value (longest first) with the mask. */
export function redact(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0 || text.length === 0) return text;
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(secret).join(MASK);
  return out;
}
