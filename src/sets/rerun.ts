/**
 * "Run again": a new set with the same environment, overrides and selection
 * as an earlier one, planned against today's config. Secret override values were sealed at
 * rest; they are unsealed here only to be sealed again into the new set, so the
 * page never has to hold (or be shown) them.
 *
 * What the earlier set needs and today's config or key no longer gives is a
 * `rerun_conflict` naming it: the client sent nothing wrong, so create's 400s
 * (which quote the request body's fields) would mislead.
 *
 * "Rerun of failures" (`{"only": "failed"}`) plans the same set and keeps only
 * the members whose tests ended FAIL in the earlier one (cancelled members are
 * FAIL too), matched by name. A failed test that today's plan no longer has is a
 * conflict, never silently dropped: a rerun must not be green without running
 * every test that failed.
 */
import { RunsetError } from '../core/errors.js';
import { isFinal } from '../core/states.js';
import type { NewTestRunSet, TestRunRecord, TestRunSetRecord, TestSelection, VariableValue } from '../core/types.js';
import type { SuiteConfig } from '../config/suite.js';
import { unseal } from '../secrets/index.js';
import { membersInClaimOrder, planTestRunSet, type PlanOptions } from './plan.js';

/** The label a rerun of failures carries: the id of the set it reruns (label keys are lower case). */
export const RERUN_OF_LABEL = 'rerun-of';

export interface EarlierSet {
  id: string;
  env: string;
  overrides: Readonly<Record<string, VariableValue>>;
  /** Kept: the new set answers the same question (that commit, that pipeline) again. */
  labels: Readonly<Record<string, string>>;
  /** Kept: a set of the smoke tests is run again as the smoke tests. Null or absent: every test. */
  select?: TestSelection | null;
  /**
   * Kept, up to the environment's setTimeout of now: a rerun runs the same
   * tests, and is given no longer than the set it repeats was (an operator's
   * shorter setTimeout since still bounds it). Null or absent: the environment's own.
   */
  timeoutSeconds?: number | null;
  /**
   * Kept: a rerun answers the earlier set's question (that pull request, that
   * deploy) again, so it is the newest set of that group — it supersedes the
   * group's older unfinished sets as a create does, and the next set of the
   * group supersedes it (GitHub Actions' re-runs keep their concurrency group
   * too). Null or absent: no group.
   */
  concurrencyGroup?: string | null;
}

/** The names of the members of an ended set that ended FAIL; refuses a set still running (409) and one with none (422). */
export function failedNames(set: TestRunSetRecord, members: readonly TestRunRecord[]): string[] {
  if (!isFinal(set.status)) {
    throw new RunsetError('rerun_conflict', `set ${set.id} is ${set.status}: it has not ended, so which of its tests failed is not known yet. Wait for it to end (or cancel it), then rerun its failures.`);
  }
  const failed = members.filter((m) => m.status === 'FAIL').map((m) => m.name);
  if (failed.length === 0) {
    throw new RunsetError('nothing_to_rerun', `set ${set.id} ended ${set.status} with no member FAIL (of ${members.length}): there is nothing to rerun. Use "run again" (no body) to run all of its tests.`);
  }
  return failed;
}

/** planRerun, keeping only the members named `failed` (failedNames); each must still be among the tests planned today. */
export function planRerunOfFailures(suite: SuiteConfig, earlier: EarlierSet, failed: readonly string[], opts: PlanOptions): NewTestRunSet {
  const planned = planRerun(suite, { ...earlier, labels: { ...earlier.labels, [RERUN_OF_LABEL]: earlier.id } }, opts);
  const specs = [...planned.runs].sort((a, b) => a.position - b.position).map((run) => run.spec);
  const wanted = new Set(failed);
  const kept = specs.filter((spec) => wanted.has(spec.name));
  const known = new Set(kept.map((spec) => spec.name));
  const gone = failed.filter((name) => !known.has(name));
  if (gone.length > 0) {
    const shown = gone.slice(0, 3).map((name) => JSON.stringify(name)).join(', ') + (gone.length > 3 ? ` and ${gone.length - 3} more` : '');
    throw new RunsetError(
      'rerun_conflict',
      `set ${earlier.id} had failing test${gone.length === 1 ? '' : 's'} ${shown} that environment "${earlier.env}" no longer plans (renamed, removed or no longer selected); a rerun that skipped ${gone.length === 1 ? 'it' : 'them'} could pass without ${gone.length === 1 ? 'it' : 'them'}. Create a new set instead.`,
    );
  }
  const rules = new Map(planned.runs.map((run) => [run.spec.name, { quarantined: run.quarantined, failOnFlaky: run.failOnFlaky }]));
  return { ...planned, runs: membersInClaimOrder(kept, opts.history ?? new Map(), (name) => rules.get(name)!) };
}

export function planRerun(suite: SuiteConfig, earlier: EarlierSet, opts: PlanOptions): NewTestRunSet {
  const envOverride: Record<string, string> = {};
  for (const [name, value] of Object.entries(earlier.overrides)) {
    if (value.kind === 'plain') envOverride[name] = value.value;
    else if (value.kind === 'sealed') envOverride[name] = unsealOverride(earlier.id, name, value.box, opts.secretKey);
    // An `env` reference is never an override (overrides are values sent by a client).
  }
  try {
    return planTestRunSet(suite, { env: earlier.env, envOverride, labels: { ...earlier.labels }, ...(earlier.select ? { select: earlier.select } : {}), ...inheritedTerms(suite, earlier) }, opts);
  } catch (err) {
    throw asRerunConflict(err, suite, earlier);
  }
}

/** The earlier set's deadline (never past today's setTimeout) and concurrency group, as a create body would give them. */
function inheritedTerms(suite: SuiteConfig, earlier: EarlierSet): { timeoutSeconds?: number; concurrencyGroup?: string } {
  const setTimeoutSeconds = suite.environments.get(earlier.env)?.setTimeoutSeconds;
  return {
    ...(typeof earlier.timeoutSeconds === 'number' && setTimeoutSeconds !== undefined ? { timeoutSeconds: Math.min(earlier.timeoutSeconds, setTimeoutSeconds) } : {}),
    ...(earlier.concurrencyGroup ? { concurrencyGroup: earlier.concurrencyGroup } : {}),
  };
}

/** planTestRunSet's refusals of what the earlier set itself carried, worded for "run again"; anything else as it was. */
function asRerunConflict(err: unknown, suite: SuiteConfig, earlier: EarlierSet): unknown {
  if (!(err instanceof RunsetError)) return err;
  if (err.code === 'unknown_environment') {
    return new RunsetError(
      'rerun_conflict',
      `set ${earlier.id} ran on environment "${earlier.env}", which the config no longer has; configured environments: ${[...suite.environments.keys()].join(', ')}. Create a new set instead.`,
      { cause: err },
    );
  }
  if (err.code === 'undeclared_variable') {
    const declared = suite.environments.get(earlier.env)?.variables ?? {};
    const gone = Object.keys(earlier.overrides).filter((name) => !(name in declared));
    return new RunsetError(
      'rerun_conflict',
      `set ${earlier.id} overrode ${gone.join(', ')}, which environment "${earlier.env}" no longer declares. Create a new set with the overrides it declares instead.`,
      { cause: err },
    );
  }
  if (err.code === 'no_tests_selected') {
    return new RunsetError('rerun_conflict', `set ${earlier.id} ran a selection that today's tests no longer match (${err.message}). Create a new set with another selection instead.`, { cause: err });
  }
  if (err.code === 'override_not_allowed') {
    return new RunsetError(
      'rerun_conflict',
      `set ${earlier.id} was created with an override that environment "${earlier.env}" no longer allows (${err.message}). Create a new set with an allowed value instead.`,
      { cause: err },
    );
  }
  return err;
}

function unsealOverride(setId: string, name: string, box: string, key: Buffer): string {
  try {
    return unseal(box, key);
  } catch (err) {
    throw new RunsetError(
      'rerun_conflict',
      `set ${setId} has a secret override of ${name} that this server cannot read: it was sealed under another RUNSET_SECRET_KEY. Create a new set with the value instead.`,
      { cause: err },
    );
  }
}
