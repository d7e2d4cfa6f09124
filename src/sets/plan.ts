/**
 * Planning a Test Run Set: from a create request and the suite config to the
 * set and members the store will hold. Pure apart from ids and the clock, so
 * every rule here is unit-tested without a server.
 *
 * Rules (docs/interface.md, "What we decided where the contract is silent"): env must name a configured
 * environment; override keys must be declared variables of it (a typo must never
 * silently test the wrong target) and, for a variable that constrains its
 * overrides, match its allowed forms; a set with no tests is refused, and so is
 * a selection (`select`, ./select.ts) that keeps none of the environment's tests.
 */
import { echo, RunsetError } from '../core/errors.js';
import type { EnvironmentConfig, NewTestRun, NewTestRunSet, TestSpec, VariableValue } from '../core/types.js';
import type { MemberRules } from '../core/moves.js';
import type { CreateTestRunSetBody } from '../core/wire.js';
import { testsForEnvironment, type SuiteConfig } from '../config/suite.js';
import { overrideRefusal } from '../config/override-rules.js';
import { isSecret, seal } from '../secrets/index.js';
import { claimOrder, expectedDurations } from '../core/expected.js';
import { newRecordId } from '../core/ids.js';
import { setTimeoutText } from '../core/deadlines.js';
import { isSelecting, refuseEmptySelection, selectTests } from './select.js';

export interface PlanOptions {
  secretKey: Buffer;
  keyId: string | null;
  /** Recent successful durations of the environment's tests, by name (DurationsStore.history); none: no history yet. */
  history?: ReadonlyMap<string, readonly number[]>;
  /** Names of the environment's tests quarantined now (QuarantineStore.activeNames): their members' ends do not fail the set. */
  quarantined?: ReadonlySet<string>;
}

export function planTestRunSet(suite: SuiteConfig, body: CreateTestRunSetBody, opts: PlanOptions): NewTestRunSet {
  const environment = suite.environments.get(body.env);
  if (!environment) {
    throw new RunsetError(
      'unknown_environment',
      `env "${echo(body.env)}" is not a configured environment; known environments: ${[...suite.environments.keys()].join(', ')}`,
    );
  }
  const declared = environment.variables;
  const variables: Record<string, VariableValue> = { ...declared };
  const overrides: Record<string, VariableValue> = {};
  for (const [name, value] of Object.entries(body.envOverride ?? {})) {
    const current = declared[name];
    if (!current) {
      const names = Object.keys(declared);
      throw new RunsetError(
        'undeclared_variable',
        `envOverride.${echo(name)}: environment "${body.env}" does not declare ${echo(name)}; declared variables: ${names.length ? names.join(', ') : '(none)'}`,
      );
    }
    const rule = environment.overrideRules[name];
    const refusal = rule ? overrideRefusal(name, value, rule, isSecret(current)) : null;
    if (refusal !== null) throw new RunsetError('override_not_allowed', refusal);
    const kept: VariableValue = isSecret(current) ? { kind: 'sealed', box: seal(value, opts.secretKey) } : { kind: 'plain', value };
    variables[name] = kept;
    overrides[name] = kept;
  }
  const declaredTests = testsForEnvironment(suite, body.env);
  if (declaredTests.length === 0) {
    throw new RunsetError('no_tests', `environment "${body.env}" has no tests: every test's "environments" list leaves it out, so the set could only pass empty`);
  }
  if (body.timeoutSeconds !== undefined && body.timeoutSeconds > environment.setTimeoutSeconds) {
    throw new RunsetError(
      'set_timeout_too_long',
      `timeoutSeconds ${body.timeoutSeconds} is over environment "${body.env}"'s setTimeout of ${setTimeoutText(environment.setTimeoutSeconds)} (${environment.setTimeoutSeconds} seconds); send at most ${environment.setTimeoutSeconds}, or leave it out for the environment's own`,
    );
  }
  refuseEmptySelection(body.select);
  const select = body.select && isSelecting(body.select) ? body.select : null;
  const tests = selectTests(declaredTests, select, body.env);
  return {
    id: newRecordId(),
    env: body.env,
    variables,
    overrides,
    keyId: opts.keyId,
    createdAt: new Date().toISOString(),
    maxFailures: environment.maxFailures,
    maxConcurrentSets: environment.maxConcurrentSets,
    timeoutSeconds: body.timeoutSeconds ?? environment.setTimeoutSeconds,
    concurrencyGroup: body.concurrencyGroup ?? null,
    labels: { ...body.labels },
    select,
    runs: membersInClaimOrder(tests, opts.history ?? new Map(), rulesFor(environment, opts.quarantined)),
  };
}

/** The members, longest expected first: the store keeps this order as their claim order (src/scheduler/shares.ts). */
export function membersInClaimOrder(tests: readonly TestSpec[], history: ReadonlyMap<string, readonly number[]>, rules: (name: string) => MemberRules): NewTestRun[] {
  const expected = expectedDurations(tests, history);
  return claimOrder(expected).map((position) => {
    const spec = tests[position] as TestSpec;
    return { id: newRecordId(), position, spec, expectedMs: expected[position] as number, ...rules(spec.name) };
  });
}

/** The rules a member of `environment` is planned with: its failOnFlaky, and whether its test is quarantined now. */
export function rulesFor(environment: EnvironmentConfig, quarantined: ReadonlySet<string> = new Set()): (name: string) => MemberRules {
  return (name) => ({ quarantined: quarantined.has(name), failOnFlaky: environment.failOnFlaky });
}
