/**
 * Batch keys: which members of a set may run in one executor call. Both stores
 * compute the key from the member's spec when the set is created, so the
 * scheduler can claim a member together with its batch-mates.
 *
 * Only Playwright cases batch: starting Playwright and a browser costs about a
 * second, so one process per test case would never get near the speed of one
 * `npx playwright test` (DESIGN.md, performance budgets). The cases of one
 * config entry and one Playwright project share their settings (config file,
 * workers, retries, timeout), so they can share one process.
 */
import type { TestSpec } from './types.js';

export function batchKeyOf(spec: TestSpec): string | null {
  if (spec.type !== 'playwright' || spec.case === undefined) return null;
  return `playwright:${JSON.stringify([spec.case.entry, spec.case.project])}`;
}
