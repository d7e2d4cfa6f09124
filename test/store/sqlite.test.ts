import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { runStoreContract } from './contract.js';

runStoreContract('sqlite', async () => {
  const store = new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), 'runset-store-')), 'runset.db'));
  await store.migrate();
  return store;
});
