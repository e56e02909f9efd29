/**
 * The schema checks of one service (docs/database.md "What the tests check"): the migrations import nothing but
 * kysely; a freshly migrated database dumps exactly as the checked-in src/db/schema.sql; each migration's down()
 * restores the schema from before its up(), all of them leave nothing behind, and the migrations applied again
 * build the same schema. On a private PostgreSQL 15 cluster (scripts/schema-dump.ts), so the dump does not
 * depend on the server of DATABASE_URL. Call it from a test file: it declares the tests.
 */
import {
  checkedInDump,
  createEmptySchema,
  driftMessage,
  foreignMigrationImports,
  leftovers,
  migrateUp,
  serviceDatabase,
  startPrivateCluster,
  stepMigrator,
  type PrivateCluster,
  type SchemaService,
} from '../../scripts/schema-dump';
import type { Database } from '@sports-timing/shared';

/**
 * A check of the freshly migrated database beyond its dump (e.g. a check constraint held to the spec):
 * test name → body, given the database (its pool's `search_path` is the service's schema). Throws to fail.
 */
export type FreshDatabaseChecks = Record<string, (database: Database<unknown>) => Promise<void>>;

/**
 * Declares the schema tests of `service` in the calling test file, and one test per entry of `freshChecks`
 * on the same freshly migrated database the dump is taken of.
 */
export function schemaChecks(service: SchemaService, freshChecks: FreshDatabaseChecks = {}): void {
  let cluster: PrivateCluster;
  let fresh: Database<unknown> | undefined;

  beforeAll(async () => {
    cluster = startPrivateCluster();
    fresh = await serviceDatabase(cluster, service, 'fresh');
    await migrateUp(fresh, service);
  });
  afterAll(async () => {
    await fresh?.close();
    cluster?.stop();
  });

  test('every migration imports nothing but kysely and the function texts (frozen migrations)', () => {
    expect(foreignMigrationImports(service)).toEqual([]);
  });

  test('a freshly migrated database has exactly the schema of src/db/schema.sql', () => {
    const dump = cluster.dump('fresh', service.schema);
    expect(driftMessage(service.dumpFile, dump, checkedInDump(service), 'pnpm schema:dump')).toBeUndefined();
  });

  for (const [name, check] of Object.entries(freshChecks)) test(`freshly migrated: ${name}`, () => check(fresh!));

  test('each down() restores the schema before its up(); all down leaves nothing; up again builds the same schema', async () => {
    const database = await serviceDatabase(cluster, service, 'round_trip');
    const dump = () => cluster.dump('round_trip', service.schema);
    try {
      await createEmptySchema(database, service);
      const steps = stepMigrator(database, service);
      const empty = dump();
      for (const migration of Object.keys(service.migrations).sort()) {
        const before = dump();
        expect(await steps.up()).toEqual([migration]);
        const after = dump();
        expect(await steps.down()).toEqual([migration]); // [] when it has no down()
        expect({ migration, schema: dump() }).toEqual({ migration, schema: before });
        expect(await steps.up()).toEqual([migration]);
        expect({ migration, schema: dump() }).toEqual({ migration, schema: after });
      }
      const full = dump();
      await steps.allDown();
      expect(await leftovers(database, service)).toEqual([]);
      expect(dump()).toBe(empty);
      await migrateUp(database, service);
      expect(dump()).toBe(full);
    } finally {
      await database.close();
    }
  });
}
