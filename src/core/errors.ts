/**
 * The error registry: every error a client can meet has a stable `code`, an HTTP
 * status and a title. Responses are RFC 9457 problem details built from it, and
 * the error table (docs/reference/errors.md) is checked against it by a test.
 */

export const ERRORS = Object.freeze({
  unauthorized: { status: 401, title: 'Missing or invalid API key' },
  invalid_json: { status: 400, title: 'Request body is not valid JSON' },
  invalid_body: { status: 400, title: 'Request body does not match the schema' },
  unknown_field: { status: 400, title: 'Request body has a field that is not accepted' },
  unknown_environment: { status: 400, title: 'No such environment' },
  undeclared_variable: { status: 400, title: 'Override names a variable the environment does not declare' },
  override_not_allowed: { status: 400, title: 'Override value is not one the variable allows' },
  set_timeout_too_long: { status: 400, title: "timeoutSeconds is over the environment's setTimeout" },
  invalid_id: { status: 400, title: 'Malformed id' },
  invalid_query: { status: 400, title: 'Query parameters do not match the schema' },
  invalid_header: { status: 400, title: 'A request header is malformed' },
  invalid_url: { status: 400, title: 'The URL is malformed' },
  worker_protocol_unsupported: { status: 400, title: 'The worker speaks a protocol revision this API does not take' },
  invalid_until: { status: 400, title: 'The quarantine end is in the past or too far ahead' },
  malformed_request: { status: 400, title: 'The request is not valid HTTP' },
  csrf_rejected: { status: 403, title: 'Cross-site request refused' },
  forbidden: { status: 403, title: 'The key may not do this' },
  suite_uploads_not_allowed: { status: 403, title: 'The environment does not run uploaded suites' },
  not_found: { status: 404, title: 'Not found' },
  not_quarantined: { status: 404, title: 'The test is not quarantined' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'The request took too long to arrive' },
  rerun_conflict: { status: 409, title: 'The set cannot be run again under the current configuration' },
  lease_lost: { status: 409, title: 'The lease is no longer this worker\'s' },
  illegal_move: { status: 409, title: 'The member cannot make this move' },
  body_too_large: { status: 413, title: 'Request body too large' },
  unsupported_media_type: { status: 415, title: 'Request body is not of a media type this route takes' },
  expectation_failed: { status: 417, title: 'Expectation not supported' },
  no_tests: { status: 422, title: 'No tests match this environment' },
  nothing_to_rerun: { status: 422, title: 'No member of the set ended FAIL' },
  no_tests_selected: { status: 422, title: 'The selection matches none of the environment\'s tests' },
  unknown_suite: { status: 422, title: 'No such suite version or name' },
  suite_refused: { status: 422, title: 'The suite archive is refused' },
  suite_hash_mismatch: { status: 400, title: 'The archive is not the version its id names' },
  idempotency_conflict: { status: 422, title: 'Idempotency-Key reused with a different body' },
  rate_limited: { status: 429, title: 'Too many requests' },
  headers_too_large: { status: 431, title: 'Request headers too large' },
  internal: { status: 500, title: 'Internal server error' },
  store_unavailable: { status: 503, title: 'The store is unavailable' },
  shutting_down: { status: 503, title: 'The server is shutting down' },
} as const);

export type ErrorCode = keyof typeof ERRORS;

/** A problem document as sent on the wire (plain data, never a thrown class across a boundary). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
}

export function problemOf(code: ErrorCode, detail: string): Problem {
  const { status, title } = ERRORS[code];
  return { type: `https://runset.dev/errors/${code}`, title, status, detail, code };
}

/** The most characters of one request value a detail quotes back. */
export const ECHO_LIMIT = 64;

/**
 * A piece of the request quoted in a detail, cut to ECHO_LIMIT characters: an
 * answer never echoes much of what it was sent (a 5 KB id, a huge field name),
 * and no detail quotes more than three pieces, so never over 200 characters.
 */
export function echo(value: string): string {
  return value.length <= ECHO_LIMIT ? value : `${value.slice(0, ECHO_LIMIT)}… (${value.length} characters)`;
}

/** Thrown inside the server to answer with a registered problem. */
export class RunsetError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, detail: string, options?: { cause?: unknown }) {
    super(detail, options);
    this.name = 'RunsetError';
    this.code = code;
  }
  toProblem(): Problem {
    return problemOf(this.code, this.message);
  }
}
