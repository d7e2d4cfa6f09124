/**
 * What the two stores' SQL truly differs in, in one place (pg-boss keeps its
 * backends' capability flags the same way): the move path's SQL in this folder
 * is written once over a Dialect and built once per store.
 *
 * Both engines take the rest as written: `FILTER`, `UPDATE … FROM`,
 * `RETURNING`, `true`/`false`, and `NOT`/`AND` over the SQLite store's 0/1
 * booleans.
 */
export interface Dialect {
  /**
   * The clock a move stamps on members and sets. SQLite's is the caller's
   * reading, bound as `@at` (its timestamps are the ISO text the process
   * writes); PostgreSQL's is the database's, truncated to what is stored and read
   * back (milliseconds).
   */
  readonly now: string;
  /**
   * What locks rows `alias` of a SELECT until the statement's transaction ends,
   * so concurrent moves take turns on them. SQLite's writer holds the whole
   * database for its transaction: nothing to lock.
   */
  readonly lockRowsOf: (alias: string) => string;
  /**
   * The qualifier of the written row's columns in a `RETURNING` list: the
   * table's alias on PostgreSQL; SQLite refuses an alias there and takes the
   * table's own name.
   */
  readonly returnedOf: (alias: string, table: string) => string;
  /**
   * A lease's expiry `ms` (a placeholder) from now. SQLite stores it as epoch
   * milliseconds of the process's clock, bound as `@now_ms`; PostgreSQL as a
   * timestamptz by the database's clock.
   */
  readonly msFromNow: (ms: string) => string;
  /** The whole milliseconds from timestamp `from` to `to` (a member's duration). */
  readonly msBetween: (from: string, to: string) => string;
  /** A placeholder holding a JSON text, as the column stores it (SQLite: text; PostgreSQL: jsonb). */
  readonly json: (param: string) => string;
  /** The JSON list `list` (a column as stored: SQLite text, PostgreSQL jsonb) with the SQL text `text` appended. */
  readonly jsonAppended: (list: string, text: string) => string;
  /** How many items the JSON list `list` (a column as stored) holds. */
  readonly jsonLength: (list: string) => string;
  /**
   * What a SELECT ends with to lock the rows it picks and pass over those
   * another transaction holds (a claim's `FOR UPDATE SKIP LOCKED`). SQLite's
   * writer holds the whole database: nothing to lock or skip.
   */
  readonly lockSkipping: string;
  /** The members' creation order: their claim order (SQLite's rowid, PostgreSQL's seq). */
  readonly memberOrder: string;
  /** The sets' creation order: their environment's queue order (SQLite's rowid, PostgreSQL's queue_seq; ../queue.ts). */
  readonly setOrder: string;
  /** A text placeholder, typed where it may be NULL (PostgreSQL must know it to compare it). */
  readonly text: (param: string) => string;
  /** A placeholder holding a list of texts (SQLite: a JSON array's text; PostgreSQL: text[]); it may be NULL. */
  readonly list: (param: string) => string;
  /** Whether `column` is one of list placeholder `param`'s texts. */
  readonly inList: (column: string, param: string) => string;
}

export const SQLITE: Dialect = Object.freeze({
  now: '@at',
  lockRowsOf: () => '',
  returnedOf: (_alias: string, table: string) => table,
  msFromNow: (ms: string) => `(@now_ms + ${ms})`,
  // ISO texts; never below 0, as the store measured before (a start moved back by a worker's reading).
  msBetween: (from: string, to: string) => `max(0, CAST(round((unixepoch(${to}, 'subsec') - unixepoch(${from}, 'subsec')) * 1000) AS INTEGER))`,
  json: (param: string) => param,
  jsonAppended: (list: string, text: string) => `json_insert(${list}, '$[#]', ${text})`,
  jsonLength: (list: string) => `json_array_length(${list})`,
  lockSkipping: '',
  memberOrder: 'rowid',
  setOrder: 'rowid',
  text: (param: string) => param,
  list: (param: string) => param,
  inList: (column: string, param: string) => `${column} IN (SELECT value FROM json_each(${param}))`,
});

export const POSTGRES: Dialect = Object.freeze({
  now: "date_trunc('milliseconds', now())",
  lockRowsOf: (alias: string) => ` FOR UPDATE OF ${alias}`,
  returnedOf: (alias: string) => alias,
  msFromNow: (ms: string) => `now() + make_interval(secs => ${ms}::double precision / 1000)`,
  msBetween: (from: string, to: string) => `round(extract(epoch FROM ${to} - ${from}) * 1000)::integer`,
  json: (param: string) => `${param}::jsonb`,
  jsonAppended: (list: string, text: string) => `(${list} || jsonb_build_array(${text}::text))`,
  jsonLength: (list: string) => `jsonb_array_length(${list})`,
  lockSkipping: ' FOR UPDATE SKIP LOCKED',
  memberOrder: 'seq',
  setOrder: 'queue_seq',
  text: (param: string) => `${param}::text`,
  list: (param: string) => `${param}::text[]`,
  inList: (column: string, param: string) => `${column} = ANY (${param}::text[])`,
});
