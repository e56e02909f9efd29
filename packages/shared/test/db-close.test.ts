/**
 * `Database.close()` releases every connection, also of a pool used only directly (`pool.query`, as the
 * readiness probe and the fast lanes do): Kysely ends the pool only when it used it itself, and a pool left
 * open keeps its idle connections and their timers, so a process (or a test worker) cannot exit.
 */
import { createDatabase, createLogger } from '../src';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

test('close() ends a pool that only pool.query used, and one Kysely used', async () => {
  const direct = createDatabase({
    connectTimeoutMs: testConnectTimeoutMs(),
    url: process.env.DATABASE_URL!,
    schema: 'public',
    logger: createLogger('test'),
    applicationName: 'close-direct',
  });
  await Promise.all([direct.pool.query('select pg_sleep(0.02)'), direct.pool.query('select pg_sleep(0.02)')]);
  expect(direct.pool.totalCount).toBe(2);
  await direct.close();
  expect(direct.pool.totalCount).toBe(0);

  const viaKysely = createDatabase({
    connectTimeoutMs: testConnectTimeoutMs(),
    url: process.env.DATABASE_URL!,
    schema: 'public',
    logger: createLogger('test'),
    applicationName: 'close-kysely',
  });
  await viaKysely.db.selectNoFrom((eb) => eb.val(1).as('one')).execute();
  await viaKysely.close();
  expect(viaKysely.pool.totalCount).toBe(0);
  // Closing twice is harmless.
  await viaKysely.close();
});
