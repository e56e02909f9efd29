/**
 * Paylinks (Payrexx `Invoice`) and checkout `Gateway`s of the payment simulator: creation with Payrexx's
 * field rules, their API answers, and the simulated payment page a paylink's `link` points to.
 */
import { SimHttpError } from '@sports-timing/shared/src/sim-server';
import { createHash } from 'node:crypto';
import type { IdAllocator } from './ids';
import type { PaymentRequest, PaymentRequestField } from './types';

/** A paylink (`invoice`) or a checkout gateway. */
export type RequestKind = 'invoice' | 'gateway';

/** The simulator's paylinks and gateways. */
export class Paylinks {
  readonly invoices = new Map<number, PaymentRequest>();
  readonly gateways = new Map<number, PaymentRequest>();

  constructor(
    private readonly ids: IdAllocator,
    /** `http://host:port` of the simulator, for the payment page links. */
    private readonly origin: () => string,
  ) {}

  /** The map of `kind`. */
  map(kind: RequestKind): Map<number, PaymentRequest> {
    return kind === 'invoice' ? this.invoices : this.gateways;
  }

  /** Forgets every paylink and gateway. */
  clear(): void {
    this.invoices.clear();
    this.gateways.clear();
  }

  /** The paylink or gateway whose payment page is `/pay/{hash}`. */
  byHash(hash: string): PaymentRequest | undefined {
    return [...this.invoices.values(), ...this.gateways.values()].find((x) => x.hash === hash);
  }

  /**
   * Creates a paylink (`invoice`: `description` required, prefill `fields[<type>][defaultValue]`) or a
   * gateway (prefill `fields[<type>][value]`, `cancelRedirectUrl`) from the request's fields `f`.
   * Throws a {@link SimHttpError} 400 naming the first bad field.
   */
  create(kind: RequestKind, f: Record<string, unknown>): PaymentRequest {
    const amount = Number(f.amount);
    if (!Number.isInteger(amount) || amount < 1) throw new SimHttpError(400, 'amount: a positive integer (cents) is required');
    const currency = typeof f.currency === 'string' ? f.currency : '';
    if (!/^[A-Z]{3}$/.test(currency)) throw new SimHttpError(400, 'currency: an ISO 4217 code is required');
    const str = (k: string, max: number): string | null => {
      const v = f[k];
      if (v === undefined || v === null || v === '') return null;
      if (typeof v !== 'string' || v.length > max) throw new SimHttpError(400, `${k}: a string of at most ${max} characters is expected`);
      return v;
    };
    const description = str('description', 2000);
    if (kind === 'invoice' && description === null) throw new SimHttpError(400, 'description: required');
    const fields: Record<string, PaymentRequestField> = {};
    if (f.fields !== undefined) {
      if (typeof f.fields !== 'object' || f.fields === null) throw new SimHttpError(400, 'fields: an object of page fields is expected');
      for (const [type, def] of Object.entries(f.fields as Record<string, unknown>)) {
        if (typeof def !== 'object' || def === null) throw new SimHttpError(400, `fields[${type}]: an object is expected`);
        const d = def as Record<string, unknown>;
        // A paylink's field prefill is `defaultValue`; `value` is the Gateway's.
        const prefill = kind === 'invoice' ? d.defaultValue : d.value;
        fields[type] = {
          ...(typeof prefill === 'string' ? { defaultValue: prefill } : {}),
          ...(typeof d.mandatory === 'string' ? { mandatory: d.mandatory } : {}),
          ...(typeof d.name === 'string' ? { name: d.name } : {}),
        };
      }
    }
    const id = this.ids.allocate(kind);
    const hash = createHash('sha256').update(`${kind}-${id}-${Date.now()}-${Math.random()}`).digest('hex').slice(0, 32);
    const r: PaymentRequest = {
      id,
      hash,
      link: `${this.origin()}/pay/${hash}`,
      status: 'waiting',
      referenceId: str('referenceId', 255),
      title: str('title', 255) ?? 'Payment',
      description,
      purpose: str('purpose', 255),
      amount,
      currency,
      fields,
      successRedirectUrl: str('successRedirectUrl', 2000),
      failedRedirectUrl: str('failedRedirectUrl', 2000),
      cancelRedirectUrl: kind === 'gateway' ? str('cancelRedirectUrl', 2000) : null,
      createdAt: Math.floor(Date.now() / 1000),
    };
    this.map(kind).set(id, r);
    return r;
  }

  /** A gateway as the API answers it: no title or description, page fields with `value`. */
  gatewayAnswer(r: PaymentRequest): Record<string, unknown> {
    const { title: _title, description: _description, fields, ...rest } = r;
    const gatewayFields = Object.fromEntries(
      Object.entries(fields).map(([type, f]) => [
        type,
        { ...(f.defaultValue !== undefined ? { value: f.defaultValue } : {}), ...(f.name !== undefined ? { name: f.name } : {}) },
      ]),
    );
    return Object.fromEntries(Object.entries({ ...rest, fields: gatewayFields }).filter(([, v]) => v !== null));
  }

  /** A paylink as the API answers it (only the Invoice's own fields). */
  invoiceAnswer(r: PaymentRequest): Record<string, unknown> {
    const { cancelRedirectUrl: _cancel, ...rest } = r;
    // Parameters not given are left out rather than null.
    return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null));
  }
}

/** The simulated payment page of `r` (HTML): title, amount, status, and Pay and Cancel buttons while `waiting`. */
export function payPageHtml(r: PaymentRequest): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const amount = `${(r.amount / 100).toFixed(2)} ${r.currency}`;
  const email = r.fields.email?.defaultValue;
  const form =
    r.status === 'waiting'
      ? `<form method="post">${email !== undefined ? `<p>E-mail: <input name="email" value="${esc(email)}"${r.fields.email?.mandatory === '1' ? ' required' : ''}></p>` : ''}<button name="action" value="pay">Pay ${esc(amount)}</button> <button name="action" value="cancel">Cancel</button></form>`
      : '';
  return `<!doctype html><meta charset="utf-8"><title>${esc(r.title)}</title><h1>${esc(r.title)}</h1><p>${esc(r.description ?? '')}</p><p>${esc(amount)} · ${esc(r.referenceId ?? '')}</p><p>Status: <b>${esc(r.status)}</b> (simulated payment page)</p>${form}`;
}
