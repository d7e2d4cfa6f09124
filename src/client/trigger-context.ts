/**
 * The vocabulary shared by the trigger flow (trigger.ts) and its ending
 * (finish.ts): options, exit codes, and the context passed between them.
 */
import type { ProgressReporter } from './progress.js';
import type { TextSink } from './redact.js';
import type { SignalSource } from './interrupt.js';
import type { TestSelection } from './types.js';

/** 0 SUCCESS (or created, without --wait), 1 FAIL, 2 timed out, 3 any other error. */
export const EXIT_CODES = Object.freeze({ success: 0, fail: 1, timeout: 2, error: 3 } as const);
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

export interface TriggerOptions {
  env: string;
  /** From repeated `--override K=V`. */
  overrides: Record<string, string>;
  /** From repeated `--label k=v`: on top of the CI's own labels. */
  labels?: Record<string, string>;
  /** Read the CI's variables into labels (default; --no-ci-labels turns it off). */
  ciLabels?: boolean;
  /** `--group`: the set's concurrency group; a new set of a group supersedes the group's older unfinished sets of its environment. */
  group?: string | undefined;
  /** Without --group, in GitHub Actions: the repository, workflow and ref as the group (default; --no-ci-group turns it off). */
  ciGroup?: boolean;
  wait: boolean;
  intervalMs: number;
  /** Counted from the start of the create. */
  timeoutMs: number;
  junit?: string | undefined;
  json: boolean;
  /** With --wait: on SIGINT/SIGTERM, cancel the set before exiting (default; --no-cancel-on-exit turns it off). */
  cancelOnExit?: boolean;
  /** The suite version the set runs: its id (after `--suite DIR` pushed it) or a published name (`--suite-name`); absent: the server's own tests. */
  suite?: string | undefined;
  /** Only these of the environment's tests (--tag, --grep, --grep-invert, --test, --project); absent: all of them. */
  select?: TestSelection | undefined;
  /** Instead of a create: rerun the failures of this set (its id). The environment, overrides, labels and selection are that set's. */
  rerunFailed?: string | undefined;
}

export interface TriggerIo {
  stdout: TextSink;
  stderr: TextSink;
}

/** The process environment, or a plain object in tests. */
export type TriggerEnv = Readonly<Record<string, string | undefined>>;

export interface TriggerDeps {
  fetch?: typeof globalThis.fetch;
  userAgent?: string;
  /** Where SIGINT/SIGTERM come from while waiting. Default: the process. */
  signals?: SignalSource;
  /** Told the new set's id as soon as it exists (the GitHub Action saves it for its post step). */
  onCreated?: (id: string) => Promise<void> | void;
}

/** A reason to stop with a given exit code; its message is the last line on stderr. */
export class TriggerFailure extends Error {
  readonly exitCode: ExitCode;
  constructor(exitCode: ExitCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TriggerFailure';
    this.exitCode = exitCode;
  }
}

export interface TriggerContext {
  readonly options: TriggerOptions;
  readonly env: TriggerEnv;
  /** Both sinks redact the API key. */
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  readonly progress: ProgressReporter;
  /** Epoch ms just before the create: --timeout counts from here. */
  readonly started: number;
  readonly deadline: number;
  /** Texts that must never be written anywhere (the API key). */
  readonly secrets: readonly string[];
  /** Reports that could not be written; they turn a success into exit 3. */
  readonly problems: string[];
}
