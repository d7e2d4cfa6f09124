/**
 * The PostgreSQL side of the set views sub-store: what people read about a set
 * (../set-views.ts), each a named statement (the dashboard's list through
 * ./set-listing.ts). The rules of ./statements.ts hold.
 */
import type pg from 'pg';
import type { PlaywrightCase, QueuePlace, TestSpec } from '../../core/types.js';
import type { ListSetsQuery, SetPage } from '../browse.js';
import { heldMembersSql, type HeldMembers, type SetAsk, type SetViewsStore } from '../set-views.js';
import { askedOf, playwrightCasesOf, rowMappers, type AskedRow } from '../rows.js';
import { placeHoldersSql, queuePlaceOf, queuePlaceSql, type QueuePlaceRow } from '../queue.js';
import { withClient, type Queryable } from './connection.js';
import { listSetsPage } from './set-listing.js';
import type { Names } from './statements.js';

/** PostgreSQL returns timestamps as Dates. */
const { toSet } = rowMappers<Date>((value) => value.toISOString());

export class PostgresSetViews implements SetViewsStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  list(query: ListSetsQuery): Promise<SetPage> {
    return withClient(this.pool, (q) => listSetsPage(q, this.n, query, toSet));
  }

  async asked(id: string): Promise<SetAsk | undefined> {
    const { rows } = await this.pool.query<AskedRow<unknown>>({
      name: 'runset.asked',
      text: `SELECT overrides, labels, suite, selection, timeout_seconds, concurrency_group FROM ${this.n.sets} WHERE id = $1`,
      values: [id],
    });
    // jsonb columns arrive parsed.
    return rows[0] && askedOf(rows[0], (value) => value);
  }

  async playwrightCases(setId: string): Promise<Map<string, PlaywrightCase>> {
    const { rows } = await this.pool.query<{ id: string; spec: TestSpec }>({
      name: 'runset.playwrightCases',
      text: `SELECT id, spec FROM ${this.n.runs} WHERE set_id = $1 AND type = 'playwright' ORDER BY position`,
      values: [setId],
    });
    return playwrightCasesOf(rows);
  }

  async held(setId: string): Promise<HeldMembers[]> {
    const { rows } = await this.pool.query<{ workerId: string; members: string }>({ name: 'runset.held', text: heldMembersSql(this.n.runs, '$1'), values: [setId] });
    return rows.map((r) => ({ workerId: r.workerId, members: Number(r.members) }));
  }

  queuePlace(setId: string): Promise<QueuePlace | null> {
    return withClient(this.pool, (q) => readQueuePlace(q, this.n, setId));
  }
}

/** A set's queue place, then the sets holding its environment's places: two reads for a display (a set ending between them only shortens the list). */
async function readQueuePlace(q: Queryable, n: Names, setId: string): Promise<QueuePlace | null> {
  const { rows } = await q.query<QueuePlaceRow>({ name: 'runset.queuePlace', text: queuePlaceSql(n.sets, 'queue_seq', '$1'), values: [setId] });
  const place = queuePlaceOf(rows[0]);
  if (!place) return null;
  const held = await q.query<{ id: string }>({ name: 'runset.placeHolders', text: placeHoldersSql(n.sets, 'queue_seq', '$1', '$2'), values: [place.env, place.limit] });
  return { ahead: place.ahead, limit: place.limit, holders: held.rows.map((r) => r.id) };
}
