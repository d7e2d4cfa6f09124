/**
 * "Run again": a new set with the same environment and overrides as an earlier
 * one, planned against today's config. Secret override values were sealed at
 * rest; they are unsealed here only to be sealed again into the new set, so the
 * page never has to hold (or be shown) them.
 */
import type { NewTestRunSet, VariableValue } from '../core/types.js';
import type { SuiteConfig } from '../config/suite.js';
import { unseal } from '../secrets/index.js';
import { planTestRunSet, type PlanOptions } from './plan.js';

export function planRerun(
  suite: SuiteConfig,
  earlier: { env: string; overrides: Readonly<Record<string, VariableValue>> },
  opts: PlanOptions,
): NewTestRunSet {
  const envOverride: Record<string, string> = {};
  for (const [name, value] of Object.entries(earlier.overrides)) {
    if (value.kind === 'plain') envOverride[name] = value.value;
    else if (value.kind === 'sealed') envOverride[name] = unseal(value.box, opts.secretKey);
    // An `env` reference is never an override (overrides are values sent by a client).
  }
  return planTestRunSet(suite, { env: earlier.env, envOverride }, opts);
}
