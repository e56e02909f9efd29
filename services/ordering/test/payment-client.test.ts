/**
 * PaymentClient against the payment simulator over real HTTP: paylinks, gateways, transactions, payouts
 * and the accounting CSV mapped to the spec's schemas, and the failure discipline (retries on 5xx and
 * timeouts for reads only, no blind repeat of a paylink creation, errors without the API key).
 */
import { DEFAULT_API_KEY, createPaymentSimulator, type PaymentSimulator } from '@sports-timing/payment-simulator';
import { PaymentClient, PaymentProviderError, createPaymentClient } from '../src/payment/payment.client';

let sim: PaymentSimulator;
const FAST = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 40 };

function client(opts: { apiKey?: string; instance?: string; timeoutMs?: number } = {}): PaymentClient {
  return new PaymentClient({
    baseUrl: sim.baseUrl,
    instance: opts.instance ?? 'demo',
    apiKey: opts.apiKey ?? DEFAULT_API_KEY,
    timeoutMs: opts.timeoutMs ?? 2_000,
    retry: FAST,
  });
}
const apiRequests = () => sim.server.requests.filter((r) => r.path.startsWith('/api/v1/'));

beforeAll(async () => {
  sim = await createPaymentSimulator({ webhookBackoffMs: 10 }).start();
});
afterAll(() => sim.stop());
beforeEach(() => {
  sim.reset();
  sim.server.requests.length = 0;
});

describe('reads and writes', () => {
  it('creates, reads and deletes a paylink', async () => {
    const pay = client();
    const p = await pay.createPaylink({
      amountCents: 12_345,
      currency: 'EUR',
      referenceId: 'ORD-2026-000042',
      title: 'Order ORD-2026-000042',
      purpose: 'Shop order',
      email: 'ada@example.org',
      successUrl: 'https://shop.example/ok',
    });
    // `description` is required by the provider: without one the title is sent.
    expect(p).toMatchObject({
      status: 'waiting',
      amountCents: 12_345,
      currency: 'EUR',
      referenceId: 'ORD-2026-000042',
      title: 'Order ORD-2026-000042',
      purpose: 'Shop order',
      description: 'Order ORD-2026-000042',
    });
    expect(p.link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay\/[0-9a-f]+$/);
    expect(new Date(p.createdAt).toISOString()).toBe(p.createdAt);
    expect(sim.invoice(p.id)).toMatchObject({
      fields: { email: { defaultValue: 'ada@example.org', mandatory: '1' } },
      successRedirectUrl: 'https://shop.example/ok',
    });
    expect(await pay.getPaylink(p.id)).toEqual(p);
    expect(await pay.deletePaylink(p.id)).toBe(true);
    expect(await pay.getPaylink(p.id)).toBeNull();
    expect(await pay.deletePaylink(p.id)).toBe(false);
  });

  it('creates gateways the same way', async () => {
    const pay = client();
    const g = await pay.createGateway({ amountCents: 990, currency: 'CHF', referenceId: 'ORD-G' });
    expect((await pay.getGateway(g.id))!.currency).toBe('CHF');
    expect(await pay.deleteGateway(g.id)).toBe(true);
  });

  it('reads transactions as the provider reports them', async () => {
    const pay = client();
    const p = await pay.createPaylink({ amountCents: 5_294, currency: 'EUR', referenceId: 'ORD-7' });
    const tx = sim.pay(sim.invoice(p.id)!, 'mastercard');
    const read = await pay.getTransaction(tx.id);
    // The simulator writes times at +01:00; the client keeps the instant and answers UTC.
    expect(tx.time).toMatch(/\+01:00$/);
    expect(read).toEqual({
      id: tx.id,
      uuid: tx.uuid,
      status: 'confirmed',
      time: `${new Date(tx.time).toISOString().slice(0, 19)}Z`,
      referenceId: 'ORD-7',
      amountCents: 5_294,
      currency: 'EUR',
      psp: 'Simulated PSP',
      paymentMethod: 'mastercard',
      paylinkId: p.id,
      originalTransactionId: null,
      mode: 'TEST',
      refundedAmountCents: 0,
    });
    expect((await pay.getPaylink(p.id))!.status).toBe('confirmed');
    const deleteErr = await pay.deletePaylink(p.id).catch((e: unknown) => e);
    expect(deleteErr).toMatchObject({ code: 'badRequest', status: 400, retryable: false });
    expect(await pay.getTransaction(999_999)).toBeNull();
    const recent = await pay.listTransactions({ limit: 2 });
    expect(recent.map((t) => t.id)).toEqual([tx.id, tx.id - 1]);
    expect((await pay.listTransactions({ limit: 1, order: 'ASC' }))[0].referenceId).toBe('ORD-2025-000101');
    const window = await pay.listTransactions({ order: 'ASC', from: new Date('2025-01-15T00:00:00+01:00'), to: new Date('2025-01-16T09:45:01+01:00') });
    expect(window.map((t) => t.referenceId)).toEqual(['ORD-2025-000102', 'ORD-2025-000103']);
    const refund = sim.refund(tx.id, 294);
    expect(await pay.getTransaction(refund.id)).toMatchObject({
      status: 'partially-refunded',
      amountCents: 294,
      originalTransactionId: tx.id,
      referenceId: 'ORD-7',
      currency: 'EUR',
    });
  });

  it('keeps transaction statuses it does not know instead of failing', async () => {
    const pay = client();
    const p = await pay.createPaylink({ amountCents: 100, currency: 'EUR', referenceId: 'ORD-8' });
    const tx = sim.pay(sim.invoice(p.id)!);
    for (const status of ['refund_pending', 'insecure', 'disputed', 'initiated', 'expired', 'some-future-status']) {
      sim.setStatus(tx.id, status);
      expect((await pay.getTransaction(tx.id))!.status).toBe(status);
      expect((await pay.listTransactions({ limit: 1 }))[0].status).toBe(status);
    }
  });

  it('reads payouts, their transfers (Payout/{uuid}/details) and builds the accounting CSV', async () => {
    const pay = client();
    const payouts = await pay.listPayouts();
    expect(payouts.map((p) => p.date)).toEqual(['2025-02-03', '2025-01-20']);
    const [newest] = payouts;
    expect(newest).toMatchObject({ status: 'sent', currency: 'EUR', transactionCount: 2, isManualPayout: false, statementDescriptor: 'PAYREXX 20250203' });
    const details = await pay.getPayout(newest.uuid);
    expect(sim.server.requests.at(-1)!.path).toBe(`/api/v1/Payout/${newest.uuid}/details/`);
    expect(details!.transactions).toHaveLength(2);
    for (const t of details!.transactions) expect(t.netAmountCents).toBe(t.amountCents - t.feeCents);
    expect(details!.amountCents).toBe(details!.transactions.reduce((s, t) => s + t.netAmountCents, 0));
    expect(details!.feesCents).toBe(details!.transactions.reduce((s, t) => s + t.feeCents, 0));
    expect(details!.transactions[0]).toMatchObject({
      transferType: 'transaction',
      referenceId: 'ORD-2025-000117',
      amountCents: 106_999,
      time: '2025-01-28T11:30:19Z',
    });
    const csv = (await pay.getAccountingCsv(newest.uuid))!.split('\r\n');
    expect(csv[0]).toBe('payoutUuid,payoutDate,transferType,transactionId,transactionUuid,referenceId,time,amount,fee,net,currency');
    expect(csv[1]).toMatch(new RegExp(`^${newest.uuid},2025-02-03,transaction,\\d+,[0-9a-f]+,ORD-2025-000117,2025-01-28T11:30:19Z,1069.99,31.33,1038.66,EUR$`));
    expect(csv[3]).toBe(
      `${newest.uuid},2025-02-03,total,,,,,${((newest.amountCents + newest.feesCents) / 100).toFixed(2)},${(newest.feesCents / 100).toFixed(2)},${(newest.amountCents / 100).toFixed(2)},EUR`,
    );
    expect(sim.server.requests.some((r) => r.path.includes('accounting-export'))).toBe(false);
    expect(await pay.getPayout('no-such-uuid')).toBeNull();
    expect(await pay.getAccountingCsv('no-such-uuid')).toBeNull();
  });

  it('serves a payout list with one unreadable payout: that one flagged (readError), the others as they are', async () => {
    const stored = sim.ledger.payouts as unknown as Map<string, Record<string, unknown>>;
    const [first] = [...stored.values()];
    const fees = first.total_fees;
    first.total_fees = 150.5; // a decimal, as the official SDK types the field (a float)
    try {
      const payouts = await client().listPayouts();
      expect(payouts).toHaveLength(stored.size);
      const flagged = payouts.filter((p) => p.readError);
      expect(flagged).toEqual([expect.objectContaining({ uuid: String(first.uuid), feesCents: 0, readError: expect.stringMatching(/total_fees/) })]);
      expect(payouts.filter((p) => !p.readError).every((p) => p.readError === undefined && p.date !== null)).toBe(true);
    } finally {
      first.total_fees = fees;
    }
  });

  it('serves a transaction list with one unreadable transaction: that one flagged (readError), the others as they are', async () => {
    const stored = sim.ledger.transactions as unknown as Map<number, Record<string, unknown>>;
    expect(stored.size).toBeGreaterThan(2);
    const [first] = [...stored.values()];
    const amount = first.amount;
    first.amount = 1069.99; // a decimal instead of whole cents
    try {
      const listed = await client().listTransactions({ limit: 100 });
      expect(listed).toHaveLength(stored.size);
      expect(listed.filter((t) => t.readError)).toEqual([
        expect.objectContaining({ id: first.id, amountCents: 0, status: first.status, readError: expect.stringMatching(/amount/) }),
      ]);
      const good = listed.filter((t) => !t.readError);
      expect(good).toHaveLength(stored.size - 1);
      expect(good.every((t) => t.amountCents !== 0 && t.mode === 'TEST' && t.readError === undefined)).toBe(true);
      // The re-fetch of that one transaction (the webhook's path) still fails as a whole, so a payment is retried.
      await expect(client().getTransaction(Number(first.id))).rejects.toMatchObject({ code: 'invalidResponse' });
    } finally {
      first.amount = amount;
    }
    // Negative control: readable again, nothing flagged.
    expect((await client().listTransactions({ limit: 100 })).some((t) => t.readError)).toBe(false);
  });

  it('serves payout details with one unreadable transfer: that one flagged (readError), the others as they are', async () => {
    const stored = sim.ledger.payouts as unknown as Map<string, { uuid: string; transfers: Record<string, unknown>[] }>;
    const payout = [...stored.values()].find((p) => p.transfers.filter((t) => t.type === 'transaction').length >= 2)!;
    const transfer = payout.transfers.find((t) => t.type === 'transaction')!;
    const amount = transfer.amount;
    transfer.amount = '12,50';
    try {
      const details = (await client().getPayout(payout.uuid))!;
      const flagged = details.transactions.filter((t) => t.readError);
      expect(flagged).toEqual([
        expect.objectContaining({ transferType: 'transaction', amountCents: 0, netAmountCents: 0, readError: expect.stringMatching(/transfer amount/) }),
      ]);
      expect(details.transactions.filter((t) => !t.readError).every((t) => t.amountCents !== 0)).toBe(true);
      expect(details.transactions.length).toBeGreaterThanOrEqual(2);
    } finally {
      transfer.amount = amount;
    }
    expect((await client().getPayout(payout.uuid))!.transactions.some((t) => t.readError)).toBe(false);
  });

  it('pings and is built from the configuration', async () => {
    const fromConfig = createPaymentClient({ paymentBaseUrl: sim.baseUrl, paymentInstance: 'demo', paymentApiKey: DEFAULT_API_KEY });
    expect(await fromConfig.ping()).toMatchObject({ isReachable: true, httpStatus: 200 });
    expect(await client({ instance: 'other' }).ping()).toMatchObject({ isReachable: false, httpStatus: 401 });
  });
});

describe('failure discipline', () => {
  it('retries a read on 503 and succeeds', async () => {
    sim.server.fail({ status: 503, count: 2 });
    expect(await client().listPayouts()).toHaveLength(2);
    expect(apiRequests().map((r) => r.status)).toEqual([503, 503, 200]);
  });

  it('does not repeat a paylink creation after a 5xx, and says it may be retried later', async () => {
    sim.server.fail({ status: 500, count: 1, method: 'POST' });
    const err = await client()
      .createPaylink({ amountCents: 100, currency: 'EUR' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentProviderError);
    expect(err).toMatchObject({ code: 'server', status: 500, retryable: true, operation: 'POST Invoice' });
    expect(apiRequests()).toHaveLength(1);
  });

  it('does not repeat a paylink creation whose answer was lost', async () => {
    sim.server.fail({ mode: 'resetAfterProcessing', method: 'POST' });
    const err = await client()
      .createPaylink({ amountCents: 100, currency: 'EUR', referenceId: 'ORD-LOST' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'network', retryable: true });
    expect(apiRequests()).toHaveLength(1);
  });

  it('never retries a 4xx', async () => {
    sim.server.fail({ status: 422, count: 1 });
    const err = await client()
      .getTransaction(1)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'badRequest', status: 422, retryable: false });
    expect(apiRequests()).toHaveLength(1);
  });

  it('times out on a slow answer after its retries', async () => {
    sim.server.delay({ ms: 500, count: 10 });
    const err = await client({ timeoutMs: 100 })
      .listTransactions()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'timeout', status: null, retryable: true });
  });

  it('reports a wrong API key clearly, without the key', async () => {
    const secret = 'pk_live_5b1e0c7d9a3f';
    const err = await client({ apiKey: secret })
      .listTransactions()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unauthorized', status: 401, retryable: false });
    expect((err as Error).message).toMatch(/^Payment provider: GET Transaction answered 401/);
    expect(JSON.stringify({ ...(err as object), message: (err as Error).message, stack: (err as Error).stack })).not.toContain(secret);
  });

  it('reports an unreachable provider as a retryable network error', async () => {
    await sim.server.down('close');
    try {
      expect(
        await client()
          .getPaylink(1)
          .catch((e: unknown) => e),
      ).toMatchObject({ code: 'network', retryable: true });
      expect((await client().ping()).isReachable).toBe(false);
    } finally {
      await sim.server.up();
    }
  });
});
