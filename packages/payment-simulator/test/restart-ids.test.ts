/**
 * A restarted payment simulator (data in memory only) must not hand out paylink or transaction ids that the
 * shop stored before the restart: with `idsFromTime` (what `pnpm start` uses) the ids of the second run are
 * above those of the first; with fixed starts (the test default) they repeat (negative control).
 */
import { createPaymentSimulator, DEFAULT_API_KEY, DEFAULT_INSTANCE } from '../src/simulator';

async function firstIds(idsFromTime: boolean): Promise<{ paylink: number; transaction: number }> {
  const sim = await createPaymentSimulator({ idsFromTime }).start();
  try {
    const res = await fetch(`${sim.baseUrl}/Invoice/?instance=${DEFAULT_INSTANCE}`, {
      method: 'POST',
      headers: { 'X-API-KEY': DEFAULT_API_KEY, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        amount: '100',
        currency: 'EUR',
        title: 't',
        description: 'd',
        referenceId: 'R-1',
      }).toString(),
    });
    const paylink = ((await res.json()) as { data: { id: number }[] }).data[0].id;
    const control = sim.baseUrl.replace(/\/api\/v1$/, '/__control');
    const paid = await fetch(`${control}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ invoiceId: paylink }),
    });
    const transaction = ((await paid.json()) as { transaction: { id: number } }).transaction.id;
    return { paylink, transaction };
  } finally {
    await sim.stop();
  }
}

test('ids derived from time do not repeat across a restart; fixed starts do (negative control)', async () => {
  const before = await firstIds(true);
  await new Promise((r) => setTimeout(r, 150));
  const after = await firstIds(true);
  expect(after.paylink).toBeGreaterThan(before.paylink);
  expect(after.transaction).toBeGreaterThan(before.transaction);
  expect(after.paylink).toBeLessThan(2 ** 31);
  expect(await firstIds(false)).toEqual(await firstIds(false));
});
