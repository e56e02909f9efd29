/**
 * The `ordering` schema as its migrations build it (docs/database.md "What the tests check"): a freshly
 * migrated database dumps exactly as the checked-in src/db/schema.sql; every migration's down() runs and
 * leaves nothing behind, and the migrations applied again build the same schema. On a private PostgreSQL 15
 * cluster (scripts/schema-dump.ts), so the dump does not depend on the server of DATABASE_URL.
 */
import {
  SCHEMA_SERVICES,
  checkedInDump,
  driftMessage,
  leftovers,
  migrateAllDown,
  migrateUp,
  serviceDatabase,
  startPrivateCluster,
  type PrivateCluster,
} from '../../../scripts/schema-dump';

const service = SCHEMA_SERVICES.ordering;
let cluster: PrivateCluster;

beforeAll(() => {
  cluster = startPrivateCluster();
});
afterAll(() => cluster?.stop());

test('a freshly migrated database has exactly the schema of src/db/schema.sql', async () => {
  const database = await serviceDatabase(cluster, service, 'fresh');
  try {
    await migrateUp(database, service);
  } finally {
    await database.close();
  }
  const dump = cluster.dump('fresh', service.schema);
  expect(driftMessage(service.dumpFile, dump, checkedInDump(service), 'pnpm schema:dump')).toBeUndefined();
});

test('up → down → up: every down() runs, leaves an empty schema, and the second up builds the same schema', async () => {
  const database = await serviceDatabase(cluster, service, 'round_trip');
  try {
    await migrateUp(database, service);
    const first = cluster.dump('round_trip', service.schema);
    await migrateAllDown(database, service);
    expect(await leftovers(database, service)).toEqual([]);
    await migrateUp(database, service);
    expect(cluster.dump('round_trip', service.schema)).toBe(first);
  } finally {
    await database.close();
  }
});
