/**
 * Concurrency promises not proven elsewhere:
 * - 64 workers reserving random card numbers (`claimRandomCardNumbers`, the order pipeline's claim) at
 *   once → 0 duplicates, every acknowledged reservation stored exactly once. CI: 64 × CARD_RESERVATIONS
 *   (default 50 = 3,200); the full 64 × 10,000 runs with CARD_RESERVATIONS=10000 (test/soak/README).
 * - Concurrent assignments of one named license → exactly one wins (the free-license race — 25 callers
 *   for 10 licenses — is in services/ordering/test/licensing.test.ts).
 */
import request from 'supertest';
import { createDatabase, createLogger, type Database } from '@sports-timing/shared';
import type { DB } from '../../services/ordering/src/db/schema';
import { claimRandomCardNumbers } from '../../services/ordering/src/siid/siid.service';
import { createOrderingDatabase } from '../../services/ordering/test/support/app';
import { ADMIN_PASSWORD, bearerOf, startIdentity, type IdentityTestContext } from '../../services/ordering/test/support/identity';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime, testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

const WORKERS = 64;
const PER_WORKER = Number(process.env.CARD_RESERVATIONS ?? 50);

jest.setTimeout(testTime(Math.max(120_000, PER_WORKER * 200)));

describe('card-number reservations', () => {
  let base: Awaited<ReturnType<typeof createOrderingDatabase>>;
  let wide: Database<DB>;
  beforeAll(async () => {
    base = await createOrderingDatabase();
    wide = createDatabase<DB>({
      connectTimeoutMs: testConnectTimeoutMs(),
      url: base.testDb.url,
      schema: 'ordering',
      max: 32,
      logger: createLogger('reservations'),
    });
  });
  afterAll(async () => {
    await wide.close();
    await base.close();
  });

  test(`${WORKERS} workers × ${PER_WORKER} random reservations: 0 duplicates, none lost`, async () => {
    const acknowledged: number[] = [];
    const started = Date.now();
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        for (let i = 0; i < PER_WORKER; i++) {
          const numbers = await wide.db.transaction().execute((trx) => claimRandomCardNumbers(trx, 'sicard9', 1, `w${w}-${i}`));
          acknowledged.push(...numbers);
        }
      }),
    );
    const ms = Date.now() - started;
    const rows = await wide.db.selectFrom('card_numbers').select(['service_id', 'order_ref']).execute();
    const distinctAcknowledged = new Set(acknowledged).size;
    testNote(
      `card reservations: ${WORKERS} workers × ${PER_WORKER} = ${acknowledged.length} in ${ms} ms (${Math.round(acknowledged.length / (ms / 1000))}/s); ${distinctAcknowledged} distinct; ${rows.length} rows`,
    );
    expect(acknowledged).toHaveLength(WORKERS * PER_WORKER);
    expect(distinctAcknowledged).toBe(acknowledged.length); // 0 duplicates
    expect(rows).toHaveLength(acknowledged.length); // none lost, none extra
    expect(new Set(rows.map((r) => r.order_ref)).size).toBe(rows.length);
  });
});

describe('license assignment', () => {
  let ctx: IdentityTestContext;
  let admin: string;
  beforeAll(async () => {
    ctx = await startIdentity();
    admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
  });
  afterAll(() => ctx.close());

  test('50 concurrent assignments of one named license: exactly one wins, 49 × 409', async () => {
    const L = '/api/rest/v1/licensing';
    await request(ctx.app).post(`${L}/create-licenses`).query({ product: 'resultsManager', numberOfLicenses: 2 }).set('authorization', admin).expect(200);
    const [free] = await ctx.database.db
      .selectFrom('licenses')
      .select('id')
      .where('email', 'is', null)
      .where('product', '=', 'resultsManager')
      .limit(1)
      .execute();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        request(ctx.app)
          .post(`${L}/assign-license`)
          .set('authorization', admin)
          .send({ product: 'resultsManager', email: `racer${i}@example.com`, licenseId: free.id }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(49);
    const rows = await ctx.database.db.selectFrom('licenses').selectAll().where('id', '=', free.id).execute();
    expect(rows[0].email).toBe(results.find((r) => r.status === 200)!.body.email);
    // The other license stays free: a named assignment never spills over.
    const stillFree = await ctx.database.db.selectFrom('licenses').select('id').where('email', 'is', null).where('product', '=', 'resultsManager').execute();
    expect(stillFree).toHaveLength(1);
  });
});
