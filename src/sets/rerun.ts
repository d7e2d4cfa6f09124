/**
 * "Run again": a new set with the same environment, overrides and selection
 * as an earlier one, planned against today's config. Secret override values were sealed at
 * rest; they are unsealed here only to be sealed again into the new set, so the
 * page never has to hold (or be shown) them.
 *
 * What the earlier set needs and today's config or key no longer gives is a
 * `rerun_conflict` naming it: the client sent nothing wrong, so create's 400s
 * (which quote the request body's fields) would mislead.
 */
import { RunsetError } from '../core/errors.js';
import type { NewTestRunSet, TestSelection, VariableValue } from '../core/types.js';
import type { SuiteConfig } from '../config/suite.js';
import { unseal } from '../secrets/index.js';
import { planTestRunSet, type PlanOptions } from './plan.js';

interface EarlierSet {
  id: string;
  env: string;
  overrides: Readonly<Record<string, VariableValue>>;
  /** Kept: the new set answers the same question (that commit, that pipeline) again. */
  labels: Readonly<Record<string, string>>;
  /** Kept: a set of the smoke tests is run again as the smoke tests. Null or absent: every test. */
  select?: TestSelection | null;
}

export function planRerun(suite: SuiteConfig, earlier: EarlierSet, opts: PlanOptions): NewTestRunSet {
  const envOverride: Record<string, string> = {};
  for (const [name, value] of Object.entries(earlier.overrides)) {
    if (value.kind === 'plain') envOverride[name] = value.value;
    else if (value.kind === 'sealed') envOverride[name] = unsealOverride(earlier.id, name, value.box, opts.secretKey);
    // An `env` reference is never an override (overrides are values sent by a client).
  }
  try {
    return planTestRunSet(suite, { env: earlier.env, envOverride, labels: { ...earlier.labels }, ...(earlier.select ? { select: earlier.select } : {}) }, opts);
  } catch (err) {
    throw asRerunConflict(err, suite, earlier);
  }
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
