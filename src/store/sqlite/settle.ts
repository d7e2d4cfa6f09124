import type Database from 'better-sqlite3';

/** Runs synchronous store work (better-sqlite3), turning a throw into a rejected promise as an async backend would. */
export function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

/**
 * Runs its work in one immediate transaction of `db`, the transaction made
 * once: better-sqlite3's db.transaction() builds four wrapper functions on
 * every call, which a claim loop paid once a member.
 */
export function immediateTransaction(db: Database.Database): <T>(work: () => T) => T {
  const transaction = db.transaction((work: () => unknown) => work());
  return <T>(work: () => T): T => transaction.immediate(work) as T;
}
