/**
 * A run of members whose set runs an uploaded suite version (ClaimedRun.suiteVersion):
 * the version is made ready in this worker's cache (fetched, checked, unpacked,
 * dependencies installed: src/suites/cache.ts) and each spec's paths, planned
 * under VERSION_ROOT, are read from that unpacked copy instead, so a member
 * never runs with files other than its set's version.
 */
import { VERSION_ROOT } from '../core/suites.js';
import type { ClaimedRun, TestSpec } from '../core/types.js';
import { relocateSpec } from '../worker-link/suite-root.js';

/** Where a worker gets suite versions (a SuiteCache). */
export interface SuiteVersionSource {
  /** Keeps the version from eviction until the returned function is called. */
  hold(id: string): () => void;
  /** The folder of the version, ready to run. */
  ensure(id: string, signal?: AbortSignal): Promise<string>;
}

export interface SuiteVersionCheckout {
  /** The members' specs, in the runs' order, with their paths in the version's folder. */
  specs: TestSpec[];
  /** The run no longer needs the version (call once its executor returned). */
  release: () => void;
}

/**
 * The specs to run for `runs` (one set's members, so one version at most).
 * Throws, saying what failed, when the version cannot be made ready; `signal`
 * stops the waiting.
 */
export async function checkOutSuiteVersion(runs: readonly ClaimedRun[], cache: SuiteVersionSource | undefined, signal: AbortSignal): Promise<SuiteVersionCheckout> {
  const id = runs[0]?.suiteVersion;
  if (!id) return { specs: runs.map((r) => r.spec), release: () => undefined };
  if (!cache) throw new Error(`the set runs suite version ${id} and this worker has no suite cache to hold it`);
  const release = cache.hold(id);
  try {
    const dir = await cache.ensure(id, signal);
    return { specs: runs.map((r) => relocateSpec(r.spec, VERSION_ROOT, dir)), release };
  } catch (err) {
    release();
    throw err;
  }
}
