/**
 * Contract tests of the Payrexx integration (docs/payrexx.md): every request the PaymentClient sends and
 * every answer the payment simulator gives pass through a recording proxy and are validated with ajv
 * against our Payrexx contract (`src/payment/payrexx-contract.ts`): unknown and read-only request
 * parameters fail, missing required ones fail, a call outside the contract fails. Webhook bodies (JSON
 * and form) are held to the contract too. Negative controls bend a recorded request and a simulator
 * answer and show the validator rejects them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv, { type ValidateFunction } from 'ajv';
import { DEFAULT_API_KEY, createPaymentSimulator, type PaymentSimulator } from '@sports-timing/payment-simulator';
import { PaymentClient } from '../src/payment/payment.client';
import {
  DeletedSchema,
  GatewayCreateRequestSchema,
  GatewaySchema,
  InstanceQuerySchema,
  InvoiceCreateRequestSchema,
  InvoiceSchema,
  PayoutSchema,
  SignatureCheckSchema,
  TransactionListQuerySchema,
  TransactionSchema,
  WebhookBodySchema,
  envelopeOf,
  type JsonSchema,
} from '../src/payment/payrexx-contract';
import { parseBracketForm } from '@sports-timing/shared/src/bracket-form';

const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strict: true });
const compile = (s: JsonSchema): ValidateFunction => ajv.compile(s);
const v = {
  invoiceRequest: compile(InvoiceCreateRequestSchema),
  gatewayRequest: compile(GatewayCreateRequestSchema),
  gateway: compile(envelopeOf(GatewaySchema)),
  instanceQuery: compile(InstanceQuerySchema),
  listQuery: compile(TransactionListQuerySchema),
  invoice: compile(envelopeOf(InvoiceSchema)),
  transaction: compile(envelopeOf(TransactionSchema)),
  payout: compile(envelopeOf(PayoutSchema)),
  deleted: compile(envelopeOf(DeletedSchema)),
  signature: compile(envelopeOf(SignatureCheckSchema)),
  webhook: compile(WebhookBodySchema),
};

interface Exchange {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string;
  body: string;
  status: number;
  answer: string;
}

/** The contract's validators of one call: query, request body (form, brackets parsed) and answer; null when the call is not in the contract. */
function contractOf(method: string, path: string): { query: ValidateFunction; body: ValidateFunction | null; answer: ValidateFunction } | null {
  const p = path.replace(/^\/api\/v1\//, '');
  const routes: [string, RegExp, ValidateFunction, ValidateFunction | null, ValidateFunction][] = [
    ['GET', /^SignatureCheck\/$/, v.instanceQuery, null, v.signature],
    ['POST', /^Invoice\/$/, v.instanceQuery, v.invoiceRequest, v.invoice],
    ['GET', /^Invoice\/\d+\/$/, v.instanceQuery, null, v.invoice],
    ['DELETE', /^Invoice\/\d+\/$/, v.instanceQuery, null, v.deleted],
    ['POST', /^Gateway\/$/, v.instanceQuery, v.gatewayRequest, v.gateway],
    ['GET', /^Gateway\/\d+\/$/, v.instanceQuery, null, v.gateway],
    ['DELETE', /^Gateway\/\d+\/$/, v.instanceQuery, null, v.deleted],
    ['GET', /^Transaction\/\d+\/$/, v.instanceQuery, null, v.transaction],
    ['GET', /^Transaction\/$/, v.listQuery, null, v.transaction],
    ['GET', /^Payout\/$/, v.instanceQuery, null, v.payout],
    ['GET', /^Payout\/[\w-]+\/(details\/)?$/, v.instanceQuery, null, v.payout],
  ];
  const r = routes.find(([m, re]) => m === method && re.test(p));
  return r ? { query: r[2], body: r[3], answer: r[4] } : null;
}

function errorsOf(fn: ValidateFunction, value: unknown): string[] {
  return fn(value)
    ? []
    : (fn.errors ?? []).map(
        (e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
      );
}

/** Every contract violation of a recorded exchange (empty when it conforms). */
function violations(x: Exchange): string[] {
  const c = contractOf(x.method, x.path);
  if (!c) return [`${x.method} ${x.path} is not in the contract`];
  const out = errorsOf(c.query, x.query).map((e) => `query ${e}`);
  if (c.body) {
    if (!x.contentType.startsWith('application/x-www-form-urlencoded')) out.push(`body is ${x.contentType}, not a form`);
    out.push(...errorsOf(c.body, parseBracketForm(x.body)).map((e) => `body ${e}`));
  }
  out.push(...errorsOf(c.answer, JSON.parse(x.answer)).map((e) => `answer ${e}`));
  return out;
}

let sim: PaymentSimulator;
let proxy: http.Server;
let proxyUrl: string;
const recorded: Exchange[] = [];
/** When set, rewrites the simulator's answer before the client sees it (negative control). */
let bend: ((path: string, answer: string) => string) | null = null;

beforeAll(async () => {
  sim = await createPaymentSimulator({ webhookBackoffMs: 10 }).start();
  proxy = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => void forward());
    const forward = async () => {
      const target = new URL(req.url!, sim.baseUrl.replace(/\/api\/v1$/, ''));
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length' && k !== 'connection')) as Record<
        string,
        string
      >;
      const answer = await fetch(target, { method: req.method, headers, body: body === '' ? undefined : body });
      let text = await answer.text();
      if (bend) text = bend(target.pathname, text);
      recorded.push({
        method: req.method!,
        path: target.pathname,
        query: Object.fromEntries(target.searchParams),
        contentType: String(req.headers['content-type'] ?? ''),
        body,
        status: answer.status,
        answer: text,
      });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(text);
    };
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/v1`;
});
afterAll(async () => {
  await new Promise((r) => proxy.close(r));
  await sim.stop();
});
beforeEach(() => {
  recorded.length = 0;
  bend = null;
  sim.reset();
});

const client = () =>
  new PaymentClient({
    baseUrl: proxyUrl,
    instance: sim.instance,
    apiKey: DEFAULT_API_KEY,
    timeoutMs: 2_000,
    retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  });

test('every request the client sends and every answer the simulator gives conform to the contract', async () => {
  const pay = client();
  expect((await pay.ping()).isReachable).toBe(true);
  const link = await pay.createPaylink({
    amountCents: 4_990,
    currency: 'EUR',
    referenceId: 'ORD-C-1',
    title: 'Order ORD-C-1',
    description: 'Payment of order ORD-C-1',
    purpose: 'ORD-C-1',
    email: 'payer@example.org',
    successUrl: 'https://shop.example/ok',
    failedUrl: 'https://shop.example/failed',
  });
  const bare = await pay.createPaylink({ amountCents: 100, currency: 'CHF', referenceId: 'ORD-C-2', title: 'Order ORD-C-2', purpose: 'ORD-C-2' });
  await pay.getPaylink(link.id);
  await pay.deletePaylink(bare.id);
  await pay.getPaylink(bare.id);
  await pay.deletePaylink(bare.id);
  const charge = sim.pay(sim.invoice(link.id)!);
  await pay.getTransaction(charge.id);
  const partial = sim.refund(charge.id, 990);
  const full = sim.refund(charge.id);
  await pay.getTransaction(partial.id);
  await pay.getTransaction(full.id);
  sim.setStatus(charge.id, 'some-new-status');
  await pay.getTransaction(charge.id);
  await pay.getTransaction(999_999);
  await pay.listTransactions();
  await pay.listTransactions({ order: 'ASC', limit: 10, offset: 2, from: new Date('2025-01-01T00:00:00+01:00'), to: new Date() });
  sim.payout();
  const payouts = await pay.listPayouts();
  await pay.getPayout(payouts[0].uuid);
  await pay.getAccountingCsv(payouts[0].uuid);
  await pay.getPayout('unknown');
  const gateway = await pay.createGateway({
    amountCents: 990,
    currency: 'EUR',
    referenceId: 'ORD-C-3',
    title: 'not sent',
    purpose: 'ORD-C-3',
    email: 'g@example.org',
    successUrl: 'https://shop.example/ok',
    cancelUrl: 'https://shop.example/cancel',
  });
  await pay.getGateway(gateway.id);
  await pay.deleteGateway(gateway.id);

  expect(recorded.length).toBeGreaterThanOrEqual(21);
  for (const x of recorded) expect({ call: `${x.method} ${x.path}`, violations: violations(x) }).toEqual({ call: `${x.method} ${x.path}`, violations: [] });
  // What was sent: description always, the e-mail prefill as the Invoice's field default, mandatory.
  const created = recorded.filter((x) => x.method === 'POST' && x.path.endsWith('/Invoice/')).map((x) => parseBracketForm(x.body));
  expect(created[0]).toMatchObject({ description: 'Payment of order ORD-C-1', fields: { email: { defaultValue: 'payer@example.org', mandatory: '1' } } });
  expect(created[1]).toMatchObject({ description: 'Order ORD-C-2' });
  expect(parseBracketForm(recorded.find((x) => x.method === 'POST' && x.path.endsWith('/Gateway/'))!.body)).toMatchObject({
    fields: { email: { value: 'g@example.org' } },
    cancelRedirectUrl: 'https://shop.example/cancel',
  });
  expect(recorded.find((x) => x.path === '/api/v1/Transaction/')!.query).toMatchObject({ orderByTime: 'DESC' });
});

test('webhook bodies (JSON and form-encoded) conform to the contract and carry the same transaction', async () => {
  const got: { type: string; body: string }[] = [];
  const rx = http.createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      got.push({ type: String(req.headers['content-type']), body: b });
      res.end();
    });
  });
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(rx.address() as AddressInfo).port}`;
  try {
    sim.subscribe(`${base}/json`, 'json');
    sim.subscribe(`${base}/form`, 'form');
    const link = await client().createPaylink({ amountCents: 2_000, currency: 'EUR', referenceId: 'ORD-W', title: 'W', email: 'w@example.org' });
    const charge = sim.pay(sim.invoice(link.id)!, 'visa', {
      products: [{ name: 'A', description: null, quantity: 2, amount: 1_000, sku: 'A-1', vatRate: 8.1 }],
    });
    sim.refund(charge.id, 500);
    sim.payout();
    await sim.idle();
  } finally {
    await new Promise((r) => rx.close(r));
  }
  const json = got.filter((g) => g.type.startsWith('application/json')).map((g) => JSON.parse(g.body) as Record<string, unknown>);
  const form = got.filter((g) => g.type.startsWith('application/x-www-form-urlencoded')).map((g) => parseBracketForm(g.body));
  // Payout and transaction events travel on their own queues: compare in a fixed order.
  const key = (b: Record<string, unknown>) =>
    JSON.stringify(
      Object.entries(b).map(([k, o]) => [k, (o as { id?: unknown; uuid?: unknown }).id ?? (o as { uuid: unknown }).uuid, (o as { status: unknown }).status]),
    );
  json.sort((a, b) => key(a).localeCompare(key(b)));
  form.sort((a, b) => key(a).localeCompare(key(b)));
  expect(json.map((j) => Object.keys(j)[0]).sort()).toEqual(['payout', 'transaction', 'transaction', 'transaction']);
  for (const body of json) expect(errorsOf(v.webhook, body)).toEqual([]);
  // The form is the same object flattened: scalars as strings (booleans 1/0), nulls left out.
  const asForm = (x: unknown): unknown =>
    x === null || typeof x !== 'object'
      ? typeof x === 'boolean'
        ? x
          ? '1'
          : '0'
        : String(x)
      : Object.fromEntries(
          Object.entries(x)
            .filter(([, y]) => y !== null && !(typeof y === 'object' && Object.keys(y as object).length === 0))
            .map(([k, y]) => [k, asForm(y)]),
        );
  expect(form).toEqual(json.map(asForm));
});

describe('negative controls: the validator rejects what departs from the contract', () => {
  test('a bent client request (old paylink form, read-only or unknown parameters, missing required ones) fails', async () => {
    await client().createPaylink({ amountCents: 100, currency: 'EUR', referenceId: 'ORD-N', title: 'N', email: 'n@example.org' });
    const sent = recorded.find((x) => x.method === 'POST')!;
    expect(violations(sent)).toEqual([]);
    const bent = (change: (f: URLSearchParams) => void): Exchange => {
      const f = new URLSearchParams(sent.body);
      change(f);
      return { ...sent, body: f.toString() };
    };
    // What the client used to send: no description, the Gateway's `fields[email][value]`.
    expect(violations(bent((f) => f.delete('description')))).toEqual(["body / must have required property 'description'"]);
    expect(violations(bent((f) => (f.delete('fields[email][defaultValue]'), f.set('fields[email][value]', 'n@example.org'))))).toEqual([
      'body /fields/email must NOT have additional properties (value)',
    ]);
    // Read-only (answer-only) properties and unknown ones.
    expect(violations(bent((f) => f.set('status', 'confirmed')))).toEqual(['body / must NOT have additional properties (status)']);
    expect(violations(bent((f) => f.set('email', 'n@example.org')))).toEqual(['body / must NOT have additional properties (email)']);
    // A filter the provider does not have.
    const list = { ...sent, method: 'GET', path: '/api/v1/Transaction/', body: '', query: { instance: 'demo', referenceId: 'ORD-N' } };
    expect(violations({ ...list, answer: '{"status":"success","data":[]}' })).toEqual(['query / must NOT have additional properties (referenceId)']);
    // A call outside the contract (the export endpoint Payrexx does not have).
    expect(violations({ ...list, path: '/api/v1/Payout/abc/accounting-export', query: { instance: 'demo' } })).toEqual([
      'GET /api/v1/Payout/abc/accounting-export is not in the contract',
    ]);
  });

  test('a bent simulator answer (old payout shape, non-integer amount, missing uuid) fails', async () => {
    bend = (path, answer) => {
      const env = JSON.parse(answer) as { data: Record<string, unknown>[] };
      if (path.startsWith('/api/v1/Payout/')) {
        for (const p of env.data) {
          p.fees = p.total_fees;
          delete p.total_fees;
          p.statementDescriptor = p.statement;
        }
      }
      if (path.startsWith('/api/v1/Transaction/'))
        for (const t of env.data) {
          t.amount = '12.50';
          delete t.uuid;
        }
      return JSON.stringify(env);
    };
    await client()
      .listPayouts()
      .catch(() => undefined);
    await client()
      .getTransaction(1001)
      .catch(() => undefined);
    const [payouts, tx] = recorded;
    expect(violations(payouts)).toEqual(
      expect.arrayContaining([
        "answer /data/0 must have required property 'total_fees'",
        'answer /data/0 must NOT have additional properties (fees)',
        'answer /data/0 must NOT have additional properties (statementDescriptor)',
      ]),
    );
    expect(violations(tx)).toEqual(expect.arrayContaining(["answer /data/0 must have required property 'uuid'", 'answer /data/0/amount must be integer']));
  });
});
