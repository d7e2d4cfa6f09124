/**
 * Batch keys: which members of a set may run in one executor call. Both stores
 * compute the key from the member's spec when the set is created, so the
 * scheduler can claim a member together with its batch-mates.
 *
 * Only listed cases batch (Playwright's, and a framework entry's: Vitest,
 * Jest, …, keyed by their type and entry): starting Playwright, a browser and the suite's
 * webServer costs a second or more, so one process per test case would never
 * get near the speed of one `npx playwright test` (bench/README.md, the
 * budgets). The cases of one config entry share its settings (config file,
 * workers, retries, timeout), so they share one process whatever their
 * Playwright project: the executor selects each case with its project.
 *
 * Keys are stored per member at create and only ever compared for equality: a
 * set created with the older per-(entry, project) key, `playwright:["e","p"]`,
 * still runs, one process per project.
 */
import type { TestSpec } from './types.js';

export function batchKeyOf(spec: TestSpec): string | null {
  const entry = listedEntryOf(spec);
  return entry === undefined ? null : `${spec.type}:${JSON.stringify([entry])}`;
}

/** The config entry a listed case comes from (a Playwright or framework case); undefined for any other test. */
export function listedEntryOf(spec: TestSpec): string | undefined {
  return spec.type === 'http' || spec.type === 'command' ? undefined : spec.case?.entry;
}
