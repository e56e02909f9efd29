/**
 * The payment simulator over real HTTP: the Payrexx-style API subset and envelope, payer actions, and
 * status webhooks (JSON and form bodies, two per payment, retries, duplicates and reordering).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_API_KEY, createPaymentSimulator, type PaymentSimulator } from '../src';

let sim: PaymentSimulator;
let control: string;
const key = { 'X-API-KEY': DEFAULT_API_KEY };

async function api(method: string, path: string, body?: Record<string, string | number>, form = false): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { ...key };
  let payload: string | undefined;
  if (body) {
    headers['content-type'] = form ? 'application/x-www-form-urlencoded' : 'application/json';
    payload = form ? new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)])).toString() : JSON.stringify(body);
  }
  const sep = path.includes('?') ? '&' : '?';
  const res = await fetch(`${sim.baseUrl}/${path}${sep}instance=demo`, { method, headers, body: payload });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text };
}
async function ctl(path: string, body?: unknown, expected = 200): Promise<any> {
  const res = await fetch(`${control}${path}`, { method: body === undefined ? 'GET' : 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
  expect(res.status).toBe(expected);
  return res.json();
}

interface Received {
  contentType: string;
  raw: string;
}
/** A webhook receiver answering the statuses in `script` first, then 200. */
async function receiver(script: number[] = []): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      got.push({ contentType: String(req.headers['content-type']), raw: b });
      res.statusCode = script.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/rest/v1/payment-provider/status`, got, close: () => new Promise((r) => server.close(() => r())) };
}
const statusOf = (r: Received): string => (r.contentType.startsWith('application/json') ? JSON.parse(r.raw).transaction.status : new URLSearchParams(r.raw).get('transaction[status]')!);

async function newPaylink(extra: Record<string, string | number> = {}): Promise<{ id: number; hash: string; link: string }> {
  const res = await api('POST', 'Invoice/', { amount: 5_294, currency: 'EUR', title: 'Order ORD-1', referenceId: 'ORD-1', ...extra });
  expect(res.status).toBe(200);
  return res.body.data[0];
}

beforeAll(async () => {
  sim = await createPaymentSimulator({ webhookBackoffMs: 20 }).start();
  control = `http://127.0.0.1:${sim.port}`;
});
afterAll(() => sim.stop());
beforeEach(async () => {
  await sim.idle();
  sim.reset();
  sim.configure({ webhookBackoffMs: 20 });
});

describe('API', () => {
  it('rejects a wrong key or instance with 401 in the Payrexx envelope', async () => {
    const wrongKey = await fetch(`${sim.baseUrl}/SignatureCheck/?instance=demo`, { headers: { 'X-API-KEY': 'nope' } });
    expect(wrongKey.status).toBe(401);
    expect(await wrongKey.json()).toMatchObject({ status: 'error' });
    expect((await fetch(`${sim.baseUrl}/SignatureCheck/?instance=other`, { headers: key })).status).toBe(401);
    expect((await api('GET', 'SignatureCheck/')).body).toEqual({ status: 'success', data: [{ id: 1 }] });
  });

  it('creates (JSON or form), reads and deletes paylinks', async () => {
    const p = await newPaylink();
    expect(p).toMatchObject({ status: 'waiting', amount: 5_294, currency: 'EUR', referenceId: 'ORD-1' });
    expect(p.link).toBe(`${control}/pay/${p.hash}`);
    const form = await api('POST', 'Invoice', { amount: 100, currency: 'CHF', 'fields[email][value]': 'a@b.example' }, true);
    expect(form.body.data[0]).toMatchObject({ amount: 100, currency: 'CHF', email: 'a@b.example' });
    expect((await api('GET', `Invoice/${p.id}/`)).body.data[0].id).toBe(p.id);
    expect((await api('DELETE', `Invoice/${p.id}/`)).body).toEqual({ status: 'success', data: [{ id: p.id }] });
    expect((await api('GET', `Invoice/${p.id}/`)).status).toBe(404);
    expect((await api('POST', 'Invoice/', { amount: 1.5, currency: 'EUR' })).status).toBe(400);
  });

  it('refuses to delete a paid paylink', async () => {
    const p = await newPaylink();
    await ctl('/__control/pay', { invoiceId: p.id });
    expect((await api('DELETE', `Invoice/${p.id}/`)).status).toBe(400);
  });

  it('serves gateways, transactions, payouts and the accounting CSV', async () => {
    const g = (await api('POST', 'Gateway/', { amount: 990, currency: 'EUR', referenceId: 'ORD-2' })).body.data[0];
    const { transaction } = await ctl('/__control/pay', { gatewayId: g.id, paymentMethod: 'twint' });
    expect((await api('GET', `Gateway/${g.id}/`)).body.data[0].status).toBe('confirmed');
    const tx = (await api('GET', `Transaction/${transaction.id}/`)).body.data[0];
    expect(tx).toMatchObject({ status: 'confirmed', amount: 990, referenceId: 'ORD-2', invoice: { paymentRequestId: g.id }, payment: { brand: 'twint' } });
    expect(tx.time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const list = (await api('GET', 'Transaction/?limit=2')).body.data;
    expect(list).toHaveLength(2);
    expect(list[0].id).toBe(transaction.id);

    const payouts = (await api('GET', 'Payout/')).body.data;
    expect(payouts.map((p: { date: string }) => p.date)).toEqual(['2025-02-03', '2025-01-20']);
    const { payout } = await ctl('/__control/payout', {});
    expect(payout.transactionIds).toEqual([transaction.id]);
    const detail = (await api('GET', `Payout/${payout.uuid}/`)).body.data[0];
    expect(detail).toMatchObject({ amount: 990 - tx.fee, fees: tx.fee, transactionCount: 1, transactions: [{ id: transaction.id, amount: 990, fee: tx.fee }] });
    const csv = await api('GET', `Payout/${payouts[1].uuid}/accounting-export`);
    expect(csv.status).toBe(200);
    expect(csv.body.split('\r\n')[0]).toBe('date,transactionId,uuid,referenceId,amount,fee,netAmount,currency');
    expect(csv.body.trim().split('\r\n')).toHaveLength(4);
    expect((await api('GET', 'Payout/unknown/')).status).toBe(404);
  });

  it('has a payment page that pays and redirects', async () => {
    const p = await newPaylink({ successRedirectUrl: 'https://shop.example/thanks' });
    const page = await fetch(p.link);
    expect(await page.text()).toContain('Pay 52.94 EUR');
    const paid = await fetch(p.link, { method: 'POST', body: 'action=pay', headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe('https://shop.example/thanks');
    expect(sim.invoice(p.id)!.status).toBe('confirmed');
  });
});

describe('webhooks', () => {
  it('delivers two JSON messages per payment: waiting, then confirmed', async () => {
    const rx = await receiver();
    try {
      await ctl('/__control/subscribe', { url: rx.url, format: 'json' });
      const p = await newPaylink();
      const { transaction } = await ctl('/__control/pay', { invoiceId: p.id });
      await sim.idle();
      expect(rx.got.map(statusOf)).toEqual(['waiting', 'confirmed']);
      const body = JSON.parse(rx.got[1]!.raw);
      expect(body.transaction).toMatchObject({ id: transaction.id, referenceId: 'ORD-1', amount: 5_294, currency: 'EUR', invoice: { paymentRequestId: p.id, referenceId: 'ORD-1' } });
      expect(body.transaction).not.toHaveProperty('payoutUuid');
      await ctl('/__control/pay', { invoiceId: p.id }, 409);
    } finally {
      await rx.close();
    }
  });

  it('delivers form-encoded bracket notation', async () => {
    const rx = await receiver();
    try {
      await ctl('/__control/subscribe', { url: rx.url, format: 'form' });
      const p = await newPaylink();
      await ctl('/__control/cancel', { invoiceId: p.id });
      await sim.idle();
      expect(rx.got).toHaveLength(1);
      expect(rx.got[0]!.contentType).toBe('application/x-www-form-urlencoded');
      const form = new URLSearchParams(rx.got[0]!.raw);
      expect(form.get('transaction[status]')).toBe('cancelled');
      expect(form.get('transaction[invoice][paymentRequestId]')).toBe(String(p.id));
      expect(form.get('transaction[amount]')).toBe('5294');
      expect(form.get('transaction[contact][email]')).toBeNull();
    } finally {
      await rx.close();
    }
  });

  it('retries a delivery the receiver does not accept, with backoff, bounded', async () => {
    const rx = await receiver([500, 503]);
    try {
      sim.subscribe(rx.url);
      const p = await newPaylink();
      await ctl('/__control/pay', { invoiceId: p.id });
      await sim.idle();
      const { deliveries } = await ctl('/__control/deliveries');
      // Both deliveries are refused once (500, then 503) and accepted on their own retry.
      const byDelivery = new Map<number, [number, number][]>();
      for (const d of deliveries as { deliveryId: number; attempt: number; status: number }[]) byDelivery.set(d.deliveryId, [...(byDelivery.get(d.deliveryId) ?? []), [d.attempt, d.status]]);
      expect([...byDelivery.values()]).toEqual([
        [
          [1, 500],
          [2, 200],
        ],
        [
          [1, 503],
          [2, 200],
        ],
      ]);

      const paid = await newPaylinkPaid();
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const dead = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/refused`;
      await new Promise((r) => closed.close(r));
      sim.subscribe(dead);
      sim.configure({ webhookMaxAttempts: 3 });
      await ctl('/__control/refund', { transactionId: paid.id });
      await sim.idle();
      const toDead = sim.deliveries.filter((d) => d.url === dead);
      expect(toDead.map((d) => d.attempt)).toEqual([1, 2, 3]);
      expect(toDead.every((d) => d.status === null && d.error === 'ECONNREFUSED')).toBe(true);
    } finally {
      await rx.close();
    }
  });

  it('duplicates and reorders deliveries in chaos mode', async () => {
    const rx = await receiver();
    try {
      sim.subscribe(rx.url);
      await ctl('/__control/chaos', { duplicate: 2, shuffle: true });
      const p = await newPaylink();
      await ctl('/__control/pay', { invoiceId: p.id });
      await sim.idle();
      const statuses = rx.got.map(statusOf);
      expect(statuses).toHaveLength(6);
      expect(statuses.filter((s) => s === 'confirmed')).toHaveLength(3);
      expect(statuses).not.toEqual(['waiting', 'waiting', 'waiting', 'confirmed', 'confirmed', 'confirmed']);
    } finally {
      await rx.close();
    }
  });

  it('refunds fully or partially', async () => {
    const tx = await newPaylinkPaid();
    expect((await ctl('/__control/refund', { transactionId: tx.id, amountCents: 1_000 })).transaction.status).toBe('partially-refunded');
    expect((await ctl('/__control/refund', { transactionId: tx.id })).transaction.status).toBe('refunded');
    await ctl('/__control/refund', { transactionId: tx.id }, 409);
  });
});

async function newPaylinkPaid(): Promise<{ id: number }> {
  const p = await newPaylink();
  return (await ctl('/__control/pay', { invoiceId: p.id })).transaction;
}
