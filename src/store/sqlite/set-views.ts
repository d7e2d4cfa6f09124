/**
 * The SQLite side of the set views sub-store: what people read about a set
 * (../set-views.ts), each answer one read of the file (the dashboard's list
 * through ./set-listing.ts).
 */
import type Database from 'better-sqlite3';
import type { PlaywrightCase, QueuePlace, TestSpec } from '../../core/types.js';
import type { ListSetsQuery, SetPage } from '../browse.js';
import { heldMembersSql, type HeldMembers, type SetAsk, type SetViewsStore } from '../set-views.js';
import { askedOf, playwrightCasesOf, rowMappers, type AskedRow } from '../rows.js';
import { placeHoldersSql, queuePlaceOf, queuePlaceSql, type QueuePlaceRow } from '../queue.js';
import { SetListing } from './set-listing.js';
import { settle } from './settle.js';

/** SQLite returns timestamps as the ISO strings they were written as. */
const { toSet } = rowMappers<string>((value) => value);

type Statement = 'cases' | 'asked' | 'queuePlace' | 'placeHolders' | 'held';

export class SqliteSetViews implements SetViewsStore {
  private readonly sql: Record<Statement, Database.Statement>;
  private readonly listing: SetListing;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      cases: db.prepare("SELECT id, spec FROM test_runs WHERE set_id = ? AND type = 'playwright' ORDER BY position"),
      asked: db.prepare('SELECT overrides, labels, suite, selection, timeout_seconds, concurrency_group FROM test_run_sets WHERE id = ?'),
      queuePlace: db.prepare(queuePlaceSql('test_run_sets', 'rowid', '@id')),
      placeHolders: db.prepare(placeHoldersSql('test_run_sets', 'rowid', '@env', '@limit')),
      held: db.prepare(heldMembersSql('test_runs', '?')),
    };
    this.listing = new SetListing(db, toSet);
  }

  list(query: ListSetsQuery): Promise<SetPage> {
    return settle(() => this.listing.page(query));
  }

  asked(id: string): Promise<SetAsk | undefined> {
    return settle(() => {
      const row = this.sql.asked.get(id) as AskedRow<string> | undefined;
      return row && askedOf(row, (text) => JSON.parse(text) as unknown);
    });
  }

  playwrightCases(setId: string): Promise<Map<string, PlaywrightCase>> {
    return settle(() => playwrightCasesOf((this.sql.cases.all(setId) as Array<{ id: string; spec: string }>).map((row) => ({ id: row.id, spec: JSON.parse(row.spec) as TestSpec }))));
  }

  held(setId: string): Promise<HeldMembers[]> {
    return settle(() => this.sql.held.all(setId) as HeldMembers[]);
  }

  queuePlace(setId: string): Promise<QueuePlace | null> {
    // One read transaction: the place and its holders agree.
    const read = this.db.transaction((): QueuePlace | null => {
      const place = queuePlaceOf(this.sql.queuePlace.get({ id: setId }) as QueuePlaceRow | undefined);
      if (!place) return null;
      const holders = (this.sql.placeHolders.all({ env: place.env, limit: place.limit }) as { id: string }[]).map((r) => r.id);
      return { ahead: place.ahead, limit: place.limit, holders };
    });
    return settle(() => read.deferred());
  }
}
