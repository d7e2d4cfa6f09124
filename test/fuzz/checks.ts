/**
 * What every fuzzed response must satisfy: never a 5xx; a documented status
 * whose body is valid against the document; no stack trace; no secret; no
 * more than the key's role allows. Pure: a response in, findings out.
 */
import type { OpenApiModel } from './openapi-model.js';
import type { FuzzRequest } from './requests.js';

export interface FuzzResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface Findings {
  /** Broken promises: the run fails on the first. */
  violations: string[];
}


/** Whether a key of `role` may get a 2xx from this operation. */
export type RoleRule = (role: string, request: FuzzRequest) => boolean;

/** Signing out without a session changes nothing: anyone may (204). */
const HARMLESS = new Set(['DELETE /v0/session']);
/** The writes a `trigger` key may make (README, Security › Keys and roles): sets, suite versions and quarantine, never keys. */
const TRIGGER_WRITES = /^(POST \/v0\/test-run-sets(\/\{id\}\/(cancel|rerun))?|PUT \/v0\/suites\/\{id\}|POST \/v0\/suite-names|(POST|DELETE) \/v0\/quarantine)$/;

/**
 * The rights of each role, written from the README's table rather than read
 * from the server's policy, so that the fuzz checks the server against the
 * promise: `read` reads (never keys), `trigger` also creates, runs again and
 * cancels sets, `admin` does everything; a request without a working key may
 * only use public operations.
 */
export const DEFAULT_ROLE_RULE: RoleRule = (role, request) => {
  const operation = request.operation;
  if (!operation) return false;
  const name = `${operation.method} ${operation.path}`;
  if (operation.secured === false || HARMLESS.has(name) || role === 'admin') return true;
  const read = (operation.method === 'GET' || operation.method === 'HEAD') && !operation.path.startsWith('/v0/keys');
  if (role === 'read') return read;
  if (role === 'trigger') return read || TRIGGER_WRITES.test(name);
  return false;
};

const STACK = /\bat (?:async )?[\w$.<>[\]]+ \(?(?:file:\/\/|node:|\/)[^\s)]*:\d+:\d+\)?|node:internal|node_modules\//;

export function check(
  model: OpenApiModel,
  request: FuzzRequest,
  response: FuzzResponse,
  secrets: readonly string[],
  mayUse: RoleRule = DEFAULT_ROLE_RULE,
): Findings {
  const findings: Findings = { violations: [] };
  const what = `${request.method} ${request.path} (${request.key.label}) → ${response.status}`;
  const violation = (text: string) => findings.violations.push(`${what}: ${text}`);
  if (response.status >= 500) violation(`a server error: ${response.text.slice(0, 300)}`);
  if (STACK.test(response.text)) violation(`a stack trace in the body: ${response.text.slice(0, 300)}`);
  const headerText = Object.values(response.headers).join('\n');
  for (const secret of secrets) {
    if (response.text.includes(secret) || headerText.includes(secret)) violation(`a secret value (${secret.slice(0, 6)}…) in the response`);
  }
  if (response.status >= 200 && response.status < 300 && !mayUse(request.key.role, request)) {
    violation(`a ${request.key.role} credential got a success`);
  }
  const body = parseJson(response.text);
  const documented = request.operation?.responses;
  if (!documented?.has(response.status)) {
    const where = request.operation ? `${request.operation.method} ${request.operation.path}` : `${request.method} (undocumented route)`;
    // A path or method the document does not have: 404, or 405 naming the methods it takes, as problem+json.
    const unknownRoute = !request.operation && (response.status === 404 || (response.status === 405 && Boolean(response.headers.allow)));
    if (!unknownRoute) violation(`status not documented for ${where}`);
    if (response.status >= 400 && request.method !== 'HEAD' && !isProblem(body)) violation(`${where} → ${response.status} is not problem+json`);
    return findings;
  }
  const schema = documented.get(response.status);
  if (schema === undefined || response.status === 204 || response.status === 304 || request.method === 'HEAD') return findings;
  if (body === undefined) {
    violation(`body is not JSON: ${response.text.slice(0, 200)}`);
    return findings;
  }
  const invalid = model.invalidity(schema, body);
  if (invalid !== null) violation(`body does not match the document (${invalid}): ${response.text.slice(0, 200)}`);
  return findings;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isProblem(body: unknown): boolean {
  const problem = body as { code?: unknown; status?: unknown; detail?: unknown } | undefined;
  return typeof problem?.code === 'string' && typeof problem.status === 'number' && typeof problem.detail === 'string';
}
