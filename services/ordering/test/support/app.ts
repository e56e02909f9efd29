/**
 * Test harness of the ordering service: a fresh database per test file, migrations applied, the real app
 * with response validation on, and tokens for any principal.
 */
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Express } from 'express';
import { sql } from 'kysely';
import { createDatabase, createLogger, migrateToLatest, type Database } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { createApp } from '../../src/app';
import { composeOrdering, type OrderingServices } from '../../src/composition';
import type { Principal } from '../../src/auth/principal';
import { generateSigningKeyPem, TokenService } from '../../src/auth/tokens';
import { loadOrderingConfig, type OrderingConfig } from '../../src/config';
import type { OrderingDeps } from '../../src/context';
import { migrations } from '../../src/db/migrations';
import { fileMailer } from '../../src/mail/mailer';
import type { DB } from '../../src/db/schema';

/** A running test context. */
export interface OrderingTestContext {
  app: Express;
  deps: OrderingDeps;
  /** What `composeOrdering(deps)` built for {@link app} (another app over `deps` composes its own). */
  services: OrderingServices;
  database: Database<DB>;
  testDb: TestDatabase;
  /**
   * A Bearer header value for a principal (default id 1). Access tokens must name an existing user, so a
   * placeholder user row with that id is created when there is none; roles and group come from the token.
   */
  bearer(p: Partial<Principal> & Pick<Principal, 'roles'>): Promise<string>;
  close(): Promise<void>;
}

/** A fresh database with the ordering schema migrated; `close()` drops it. */
export async function createOrderingDatabase(): Promise<{ database: Database<DB>; testDb: TestDatabase; close(): Promise<void> }> {
  const testDb = await createTestDatabase('ordering');
  const database = createDatabase<DB>({ url: testDb.url, schema: 'ordering', logger: createLogger('ordering-test'), connectTimeoutMs: testConnectTimeoutMs() });
  await migrateToLatest(database, migrations);
  return {
    database,
    testDb,
    async close() {
      await database.close();
      await testDb.drop();
    },
  };
}

/**
 * The token version of user `id`, after inserting a placeholder user with that id when there is none
 * (the identity sequence is moved past it, so users created later get other ids).
 */
async function ensureTestUser(database: Database<DB>, id: number): Promise<number> {
  await sql`
    insert into users (id, user_name, email, roles) overriding system value
    values (${id}, ${`test-user-${id}`}, ${`test-user-${id}@example.invalid`}, '{customer}')
    on conflict do nothing`.execute(database.db);
  await sql`select setval(pg_get_serial_sequence('users', 'id'), greatest((select max(id) from users), 1))`.execute(database.db);
  const row = await database.db.selectFrom('users').select('token_version').where('id', '=', id).executeTakeFirstOrThrow();
  return row.token_version;
}

/**
 * The order abuse limits (`src/orders/placement/order-limits.ts`) are off in test apps unless a test sets them: the
 * suites place hundreds of orders from one loopback address to one contact address, and orders with
 * codes by the hundred. `test/order-limits.test.ts` and `test/faults/rate-limits.test.ts` run them.
 */
const TEST_LIMITS_OFF: Record<string, string> = {
  ORDER_MAX_CARDS_PUBLIC: '1000',
  ORDER_PUBLIC_ORDERS_PER_CALLER_PER_HOUR: '0',
  ORDER_PUBLIC_CARDS_PER_CALLER_PER_HOUR: '0',
  ORDER_CLIENT_ORDERS_PER_HOUR: '0',
  ORDER_CLIENT_CARDS_PER_HOUR: '0',
  ORDER_MAILS_PER_RECIPIENT_PER_HOUR: '0',
  RATE_LIMIT_DISCOUNT_VALIDATIONS_PER_MINUTE: '0',
};

/** Creates database, schema and app; `env` overrides configuration. Call `close()` in afterAll. */
export async function startOrdering(env: Record<string, string> = {}, overrides: Partial<OrderingDeps> = {}): Promise<OrderingTestContext> {
  const { database, testDb } = await createOrderingDatabase();
  const logger = createLogger('ordering-test');
  const config: OrderingConfig = loadOrderingConfig({ ...TEST_LIMITS_OFF, DEMO_DATA: 'false', ...env });
  const tokens = await TokenService.create({
    privateKeyPem: generateSigningKeyPem(),
    issuer: config.jwtIssuer,
    audience: config.jwtAudience,
    ttlSeconds: config.accessTokenTtlSeconds,
  });
  // Mail of this test database's app, removed by close(): a test run leaves the temporary directory as it found it.
  const mailDir = path.join(tmpdir(), `ordering-test-mail-${testDb.name}`);
  const deps: OrderingDeps = { config, database, logger, tokens, mailer: fileMailer(mailDir), validateResponses: true, ...overrides };
  const ordering = composeOrdering(deps);
  const app = createApp(ordering);
  return {
    app,
    deps,
    services: ordering.services,
    database,
    testDb,
    async bearer(p) {
      const principal: Principal = { kind: 'user', id: 1, name: 'test', userGroup: 'public', erpRetailerEntityId: null, ...p };
      const tokenVersion = principal.kind === 'user' ? await ensureTestUser(database, principal.id) : undefined;
      return `Bearer ${await tokens.issue({ ...principal, tokenVersion })}`;
    },
    async close() {
      await database.close();
      await testDb.drop();
      rmSync(mailDir, { recursive: true, force: true });
    },
  };
}
