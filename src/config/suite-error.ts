/**
 * The one error the suite loader throws. Its message always reads
 * `<file>: <path>: <what is wrong>; expected <what is accepted>`, so a person
 * can fix the file from the message alone; the parts are also kept as fields
 * for programs (CLI, API, editors), so nobody has to parse the message.
 */

/** A path into the YAML document: mapping keys and list indexes, outermost first. */
export type PathSegment = string | number;
export type DocPath = readonly PathSegment[];

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `["tests", 3, "request", "url"]` → `tests[3].request.url`; odd keys are quoted: `headers["X Y"]`. */
export function formatPath(path: DocPath): string {
  if (path.length === 0) return '(top level)';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

export interface ConfigErrorDetails {
  file: string;
  /** Where in the document, as in the message (`tests[3].request.url`), or `line 4, column 7` for YAML syntax errors. */
  path: string;
  /** What is wrong (`missing`, `got the number 8080`, …). */
  problem: string;
  /** What is accepted there. */
  expected: string;
  /** 1-based line of the offending node, when known. */
  line?: number | undefined;
}

export class ConfigError extends Error {
  readonly file: string;
  readonly path: string;
  readonly problem: string;
  readonly expected: string;
  readonly line: number | undefined;

  constructor(details: ConfigErrorDetails) {
    super(`${details.file}: ${details.path}: ${details.problem}; expected ${details.expected}`);
    this.name = 'ConfigError';
    this.file = details.file;
    this.path = details.path;
    this.problem = details.problem;
    this.expected = details.expected;
    this.line = details.line;
  }
}

/**
 * A validation failure before it knows its file: the validators return or
 * throw these, and the loader turns the first one into a ConfigError.
 */
export interface Failure {
  path: DocPath;
  problem: string;
  expected: string;
}

export class FailureSignal extends Error {
  readonly failure: Failure;
  constructor(failure: Failure) {
    super(`${formatPath(failure.path)}: ${failure.problem}`);
    this.name = 'FailureSignal';
    this.failure = failure;
  }
}

/** Stops validation with a failure; caught by the loader. */
export function fail(path: DocPath, problem: string, expected: string): never {
  throw new FailureSignal({ path, problem, expected });
}

/** A short, one-line picture of a YAML value for "got …" messages. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'an empty value';
  if (typeof value === 'string') {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return value === '' ? 'an empty string' : `the string ${JSON.stringify(shown)}`;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return `the ${typeof value} ${String(value)}`;
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}
