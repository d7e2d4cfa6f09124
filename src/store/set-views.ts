/**
 * The set views sub-store: what people and the services they use read about a
 * set beside its status and members (./sets.ts): the dashboard's list, what a
 * set was asked for, where it stands in its environment's queue, which workers
 * are preparing its members, and the Playwright cases a code host annotates.
 * Reads only: nothing here moves a member or a set.
 */
import type { PlaywrightCase, QueuePlace, TestSelection, VariableValue } from '../core/types.js';
import type { ListSetsQuery, SetPage } from './browse.js';

/** Members of a set one worker holds, claimed and not begun. */
export interface HeldMembers {
  workerId: string;
  members: number;
}

/** The statement of SetViewsStore.held, for both stores: `runs` is the members' table, `setId` the placeholder of the set's id. */
export function heldMembersSql(runs: string, setId: string): string {
  return `SELECT worker_id AS "workerId", count(*) AS members FROM ${runs}
    WHERE set_id = ${setId} AND status = 'WAITING' AND worker_id IS NOT NULL
    GROUP BY worker_id ORDER BY worker_id`;
}

/** What a set was created with, as stored: what its details show and what a rerun of it inherits (src/sets/rerun.ts). */
export interface SetAsk {
  /** What the client sent as envOverride (secret values sealed). */
  overrides: Record<string, VariableValue>;
  /** Its labels (`{}` when none). */
  labels: Record<string, string>;
  /** The suite version it runs (src/core/suites.ts); null: the server's own config. */
  suiteVersion: string | null;
  /** Its selection (src/sets/select.ts); null: every test of its environment. */
  selection: TestSelection | null;
  /** Its deadline in seconds from creation (src/core/deadlines.ts); null: none. */
  timeoutSeconds: number | null;
  /** Its concurrency group (src/sets/supersede.ts); null: none. */
  concurrencyGroup: string | null;
}

export interface SetViewsStore {
  /** Sets newest first (createdAt, then id), filtered, one page at a time. */
  list(query: ListSetsQuery): Promise<SetPage>;
  /** What a set was asked for (its details page, a rerun, a code host's commit label); undefined when there is no such set. */
  asked(id: string): Promise<SetAsk | undefined>;
  /** The Playwright case (file and line) of each member that runs one, by member id: where a failure is annotated (src/webhooks/code-hosts/). */
  playwrightCases(setId: string): Promise<Map<string, PlaywrightCase>>;
  /**
   * The set's members a worker has claimed and not begun (leased, still
   * WAITING), by worker: what it is preparing (the suite version and its
   * dependencies, the test process and its webServer) before they start.
   */
  held(setId: string): Promise<HeldMembers[]>;
  /**
   * Where the set stands in its environment's queue (src/store/queue.ts); null
   * when it is not queued (no limit, among the first maxConcurrentSets, ended,
   * or no such set).
   */
  queuePlace(setId: string): Promise<QueuePlace | null>;
}
