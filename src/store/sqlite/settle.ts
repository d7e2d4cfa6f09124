/** Runs synchronous store work (better-sqlite3), turning a throw into a rejected promise as an async backend would. */
export function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
