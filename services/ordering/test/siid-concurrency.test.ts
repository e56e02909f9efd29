/**
 * "Two orders can never claim one number" (docs/decisions.md §6), proven against the real PostgreSQL: concurrent
 * transactions on a pool of many connections, each claiming through `claimCardNumbers` as the order
 * pipeline does.
 */
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { ApiError, createDatabase, createLogger, type Database } from '@sports-timing/shared';
import type { DB } from '../src/db/schema';
import { claimCardNumbers, claimRandomCardNumbers } from '../src/siid/siid.service';
import { createOrderingDatabase } from './support/app';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

let base: Awaited<ReturnType<typeof createOrderingDatabase>>;
let wide: Database<DB>;
beforeAll(async () => {
  base = await createOrderingDatabase();
  // Enough connections that claims really run side by side in the server.
  wide = createDatabase<DB>({
    connectTimeoutMs: testConnectTimeoutMs(),
    url: base.testDb.url,
    schema: 'ordering',
    max: 32,
    logger: createLogger('siid-concurrency'),
  });
});
afterAll(async () => {
  await wide.close();
  await base.close();
});

type Outcome = 'won' | 'taken';

async function attempt(serviceId: number, orderRef: string, hold = false): Promise<Outcome> {
  try {
    await wide.db.transaction().execute(async (trx) => {
      await claimCardNumbers(trx, 'siac1', [serviceId], orderRef);
      // Keep the claim uncommitted for a moment so that competitors queue on it.
      if (hold) await sql`select pg_sleep(0.01)`.execute(trx);
    });
    return 'won';
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) return 'taken';
    throw err;
  }
}

it('200 concurrent claims of one number: exactly one wins, 199 get 409', async () => {
  const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => attempt(8_777_777, `order-${i}`, true)));
  expect(outcomes.filter((o) => o === 'won')).toHaveLength(1);
  expect(outcomes.filter((o) => o === 'taken')).toHaveLength(199);
  const rows = await wide.db.selectFrom('card_numbers').select(['order_ref']).where('service_id', '=', 8_777_777).execute();
  expect(rows).toHaveLength(1);
  expect(rows[0].order_ref).toBe(`order-${outcomes.indexOf('won')}`);
});

it('16 workers × 250 random claims in a small range: every win is stored once, no duplicates', async () => {
  const first = 8_100_001;
  const size = 1_500;
  const wins = new Map<number, string>();
  let losses = 0;
  await Promise.all(
    Array.from({ length: 16 }, async (_, w) => {
      for (let i = 0; i < 250; i++) {
        const n = first + randomInt(size);
        const ref = `w${w}-${i}`;
        if ((await attempt(n, ref)) === 'won') {
          expect(wins.has(n)).toBe(false);
          wins.set(n, ref);
        } else losses++;
      }
    }),
  );
  expect(wins.size + losses).toBe(4_000);
  expect(losses).toBeGreaterThan(0);
  const stats = await sql<{ rows: number; distinct: number }>`
    select count(*)::int as rows, count(distinct service_id)::int as distinct
    from card_numbers where service_id between ${first} and ${first + size - 1}`.execute(wide.db);
  expect(stats.rows[0]).toEqual({ rows: wins.size, distinct: wins.size });
  const stored = await wide.db
    .selectFrom('card_numbers')
    .select(['service_id', 'order_ref'])
    .where('service_id', '>=', first)
    .where('service_id', '<', first + size)
    .execute();
  for (const r of stored) expect(r.order_ref).toBe(wins.get(r.service_id));
});

it('8 concurrent orders × 250 random numbers: all claimed, none shared', async () => {
  const claims = await Promise.all(
    Array.from({ length: 8 }, (_, i) => wide.db.transaction().execute((trx) => claimRandomCardNumbers(trx, 'sicard10', 250, `random-${i}`))),
  );
  const all = claims.flat();
  expect(all).toHaveLength(2_000);
  expect(new Set(all).size).toBe(2_000);
  for (const n of all) expect(n >= 7_000_001 && n <= 7_999_999).toBe(true);
  const rows = await sql<{ n: number }>`select count(*)::int as n from card_numbers where order_ref like 'random-%'`.execute(wide.db);
  expect(rows.rows[0].n).toBe(2_000);
});
