/**
 * The payment simulator over real HTTP: the Payrexx-style API subset and envelope, payer actions, and
 * status webhooks (JSON and form bodies, two per payment, retries, duplicates and reordering).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  DEFAULT_API_KEY,
  createPaymentSimulator,
  type PaymentDeliveriesAnswer,
  type PaymentPayoutAnswer,
  type PaymentRequest,
  type PaymentSimulator,
  type PaymentTransactionAnswer,
  type Payout,
  type PayrexxResponse,
  type Transaction,
} from '../src';

let sim: PaymentSimulator;
let control: string;
const key = { 'X-API-KEY': DEFAULT_API_KEY };

/** Calls the API with the test instance and key; `body` JSON or, with `form`, form-encoded. */
async function call(method: string, path: string, body?: Record<string, string | number>, form = false): Promise<Response> {
  const headers: Record<string, string> = { ...key };
  let payload: string | undefined;
  if (body) {
    headers['content-type'] = form ? 'application/x-www-form-urlencoded' : 'application/json';
    payload = form ? new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)])).toString() : JSON.stringify(body);
  }
  const sep = path.includes('?') ? '&' : '?';
  return fetch(`${sim.baseUrl}/${path}${sep}instance=demo`, { method, headers, body: payload });
}
/** An API call answered in the Payrexx envelope, whose `data` items are `T`s. */
async function api<T>(
  method: string,
  path: string,
  body?: Record<string, string | number>,
  form = false,
): Promise<{ status: number; body: PayrexxResponse<T> }> {
  const res = await call(method, path, body, form);
  return { status: res.status, body: (await res.json()) as PayrexxResponse<T> };
}
/** The `data` of a success envelope (an error envelope has none: the test fails with its message). */
function data<T>(res: { body: PayrexxResponse<T> }): T[] {
  if (res.body.status !== 'success') throw new Error(`Payrexx error: ${res.body.message}`);
  return res.body.data;
}
/** A control API call (GET without `body`, else POST) that must answer `expected`; its answer is a `T`. */
async function ctl<T>(path: string, body?: unknown, expected = 200): Promise<T> {
  const res = await fetch(`${control}${path}`, { method: body === undefined ? 'GET' : 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
  expect(res.status).toBe(expected);
  return (await res.json()) as T;
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
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/rest/v1/payment-provider/status`,
    got,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
/** A JSON webhook's body. */
const webhookJson = (r: Received): { transaction: Transaction } => JSON.parse(r.raw) as { transaction: Transaction };
const statusOf = (r: Received): string =>
  r.contentType.startsWith('application/json') ? webhookJson(r).transaction.status : new URLSearchParams(r.raw).get('transaction[status]')!;

async function newPaylink(extra: Record<string, string | number> = {}): Promise<PaymentRequest> {
  const res = await api<PaymentRequest>('POST', 'Invoice/', {
    amount: 5_294,
    currency: 'EUR',
    title: 'Order ORD-1',
    description: 'Order ORD-1',
    referenceId: 'ORD-1',
    ...extra,
  });
  expect(res.status).toBe(200);
  return data(res)[0];
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
    const form = await api<PaymentRequest>(
      'POST',
      'Invoice',
      { amount: 100, currency: 'CHF', description: 'd', 'fields[email][defaultValue]': 'a@b.example', 'fields[email][mandatory]': '1' },
      true,
    );
    expect(data(form)[0]).toMatchObject({ amount: 100, currency: 'CHF', fields: { email: { defaultValue: 'a@b.example', mandatory: '1' } } });
    // `description` is required; `fields[email][value]` is the Gateway's prefill, not a paylink's.
    expect((await api('POST', 'Invoice', { amount: 100, currency: 'CHF' }, true)).status).toBe(400);
    const gatewayStyle = await api<PaymentRequest>(
      'POST',
      'Invoice',
      { amount: 100, currency: 'CHF', description: 'd', 'fields[email][value]': 'a@b.example' },
      true,
    );
    expect(data(gatewayStyle)[0].fields).toEqual({ email: {} });
    expect(data(await api<PaymentRequest>('GET', `Invoice/${p.id}/`))[0].id).toBe(p.id);
    expect((await api<{ id: number }>('DELETE', `Invoice/${p.id}/`)).body).toEqual({ status: 'success', data: [{ id: p.id }] });
    expect((await api('GET', `Invoice/${p.id}/`)).status).toBe(404);
    expect((await api('POST', 'Invoice/', { amount: 1.5, currency: 'EUR' })).status).toBe(400);
  });

  it('refuses to delete a paid paylink', async () => {
    const p = await newPaylink();
    await ctl('/__control/pay', { invoiceId: p.id });
    expect((await api('DELETE', `Invoice/${p.id}/`)).status).toBe(400);
  });

  it('serves gateways, transactions (oldest first unless DESC, time filters) and payouts with transfers', async () => {
    const g = data(await api<PaymentRequest>('POST', 'Gateway/', { amount: 990, currency: 'EUR', referenceId: 'ORD-2' }))[0];
    const { transaction } = await ctl<PaymentTransactionAnswer>('/__control/pay', { gatewayId: g.id, paymentMethod: 'twint' });
    expect(data(await api<PaymentRequest>('GET', `Gateway/${g.id}/`))[0].status).toBe('confirmed');
    const tx = data(await api<Transaction>('GET', `Transaction/${transaction.id}/`))[0];
    expect(tx).toMatchObject({
      status: 'confirmed',
      amount: 990,
      referenceId: 'ORD-2',
      invoice: { paymentRequestId: g.id, currency: 'EUR' },
      payment: { brand: 'twint' },
    });
    expect(tx.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+01:00$/);
    const oldest = data(await api<Transaction>('GET', 'Transaction/?limit=2'));
    expect(oldest.map((t) => t.referenceId)).toEqual(['ORD-2025-000101', 'ORD-2025-000102']);
    const newest = data(await api<Transaction>('GET', 'Transaction/?limit=2&orderByTime=DESC'));
    expect(newest[0].id).toBe(transaction.id);
    const january = data(
      await api<Transaction>(
        'GET',
        `Transaction/?filterDatetimeUtcGreaterThan=${encodeURIComponent('2025-01-15 00:00:00')}&filterDatetimeUtcLessThan=${encodeURIComponent('2025-01-28 11:30:19')}`,
      ),
    );
    expect(january.map((t) => t.referenceId)).toEqual(['ORD-2025-000102', 'ORD-2025-000103']);

    const payouts = data(await api<Payout>('GET', 'Payout/'));
    expect(payouts.map((p) => p.date)).toEqual(['2025-02-03', '2025-01-20']);
    const { payout } = await ctl<PaymentPayoutAnswer>('/__control/payout', {});
    if (payout === null) throw new Error('POST /__control/payout answered no payout');
    const detail = data(await api<Payout>('GET', `Payout/${payout.uuid}/details/`))[0];
    expect(detail).toMatchObject({ amount: 990 - tx.payrexxFee, total_fees: tx.payrexxFee, status: 'sent', is_manual_payout: false });
    expect(detail.transfers).toEqual([
      {
        type: 'transaction',
        amount: 990 - tx.payrexxFee,
        date_time: tx.time,
        items: [
          { type: 'transaction', amount: 990 },
          { type: 'transaction-fee', amount: -tx.payrexxFee },
        ],
        transaction: expect.objectContaining({ id: tx.id, amount: 990 }),
      },
    ]);
    expect((await api('GET', 'Payout/unknown/details/')).status).toBe(404);
    expect((await api('GET', `Payout/${payout.uuid}/accounting-export`)).status).toBe(404);
  });

  it('answers a refusal of the API or control API in the Payrexx error body with its status, and logs that status', async () => {
    // Thrown by the handlers (SimHttpError) and answered by the shared server: a 500 here means the refusal escaped.
    const missing = await api('GET', 'Invoice/99999999/');
    expect(missing).toEqual({ status: 404, body: { status: 'error', message: 'No Invoice found with id 99999999' } });
    expect(await ctl('/__control/refund', { transactionId: 99999999 }, 404)).toEqual({ status: 'error', message: 'No Transaction found with id 99999999' });
    const { requests } = await ctl<{ requests: { path: string; status: number }[] }>('/__control/requests');
    expect(requests.filter((r) => r.path.endsWith('/Invoice/99999999/')).map((r) => r.status)).toEqual([404]);
  });

  it('has a payment page that pays and redirects', async () => {
    const p = await newPaylink({ successRedirectUrl: 'https://shop.example/thanks' });
    const page = await fetch(p.link);
    expect(await page.text()).toContain('Pay 52.94 EUR');
    const paid = await fetch(p.link, {
      method: 'POST',
      body: 'action=pay',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      redirect: 'manual',
    });
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
      const { transaction } = await ctl<PaymentTransactionAnswer>('/__control/pay', { invoiceId: p.id });
      await sim.idle();
      expect(rx.got.map(statusOf)).toEqual(['waiting', 'confirmed']);
      const body = webhookJson(rx.got[1]);
      expect(body.transaction).toMatchObject({
        id: transaction.id,
        referenceId: 'ORD-1',
        amount: 5_294,
        invoice: { paymentRequestId: p.id, referenceId: 'ORD-1', currency: 'EUR', products: [{ name: 'Order ORD-1', quantity: 1, amount: 5_294 }] },
        contact: { delivery_place: 'Zürich' },
      });
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
      expect(rx.got[0].contentType).toBe('application/x-www-form-urlencoded');
      const form = new URLSearchParams(rx.got[0].raw);
      expect(form.get('transaction[status]')).toBe('cancelled');
      expect(form.get('transaction[invoice][paymentRequestId]')).toBe(String(p.id));
      expect(form.get('transaction[amount]')).toBe('5294');
      expect(form.get('transaction[contact][email]')).toBeNull();
      expect(form.get('transaction[invoice][products][0][name]')).toBe('Order ORD-1');
      expect([...form.keys()].length).toBeGreaterThan(60);
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
      const { deliveries } = await ctl<PaymentDeliveriesAnswer>('/__control/deliveries');
      // The receiver refuses the first two requests it gets (500, then 503), whichever delivery or attempt they
      // belong to (two deliveries run concurrently): each refused attempt is retried with the next attempt
      // number until the delivery is accepted.
      const byDelivery = new Map<number, [number, number | null][]>();
      for (const d of deliveries) byDelivery.set(d.deliveryId, [...(byDelivery.get(d.deliveryId) ?? []), [d.attempt, d.status]]);
      const all = [...byDelivery.values()];
      expect(all).toHaveLength(2);
      for (const attempts of all) {
        expect(attempts.map(([n]) => n)).toEqual(attempts.map((_, i) => i + 1));
        expect(attempts[attempts.length - 1][1]).toBe(200);
        expect(attempts.slice(0, -1).every(([, status]) => status !== 200)).toBe(true);
      }
      expect(
        all
          .flat()
          .map(([, status]) => status)
          .filter((status) => status !== 200)
          .sort(),
      ).toEqual([500, 503]);

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

  it('refunds fully or partially as new transactions pointing at the charge, which stays confirmed', async () => {
    const tx = await newPaylinkPaid();
    const partial = (await ctl<PaymentTransactionAnswer>('/__control/refund', { transactionId: tx.id, amountCents: 1_000 })).transaction;
    expect(partial).toMatchObject({
      status: 'partially-refunded',
      amount: 1_000,
      originalTransactionId: tx.id,
      originalTransactionUuid: tx.uuid,
      invoice: { originalAmount: 5_294, refundedAmount: 1_000 },
    });
    expect(partial.id).not.toBe(tx.id);
    const rest = (await ctl<PaymentTransactionAnswer>('/__control/refund', { transactionId: tx.id })).transaction;
    expect(rest).toMatchObject({ status: 'refunded', amount: 4_294, originalTransactionId: tx.id, invoice: { refundedAmount: 5_294 } });
    expect(sim.transaction(tx.id)).toMatchObject({ status: 'confirmed', refundable: false });
    await ctl('/__control/refund', { transactionId: tx.id }, 400);
    await ctl('/__control/refund', { transactionId: rest.id }, 409);
    const { payout } = await ctl<PaymentPayoutAnswer>('/__control/payout', {});
    expect(payout!.transfers.map((t) => [t.type, t.amount])).toEqual([
      ['transaction', 5_294 - tx.payrexxFee],
      ['transaction-reversal', -1_000],
      ['transaction-reversal', -4_294],
    ]);
    expect(payout!.amount).toBe(-tx.payrexxFee);
  });
});

async function newPaylinkPaid(): Promise<Transaction> {
  const p = await newPaylink();
  return (await ctl<PaymentTransactionAnswer>('/__control/pay', { invoiceId: p.id })).transaction;
}
