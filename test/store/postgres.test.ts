/**
 * The Store contract against PostgreSQL: each test gets a fresh schema of its
 * own, dropped at the end. Needs RUNSET_TEST_DATABASE_URL; skips, saying so,
 * without it.
 */
import { after, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { dropSchemas } from '../helpers/postgres.js';
import { runStoreContract } from './contract.js';

const url = process.env.RUNSET_TEST_DATABASE_URL;

if (!url) {
  test('postgres store contract', { skip: 'RUNSET_TEST_DATABASE_URL is not set' }, () => {});
} else {
  const schemas: string[] = [];
  after(async () => {
    await dropSchemas(url, schemas);
  });
  runStoreContract('postgres', async () => {
    const schema = `runset_test_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    const store = new PostgresStore({ connectionString: url, schema });
    await store.migrate();
    return store;
  });
}
