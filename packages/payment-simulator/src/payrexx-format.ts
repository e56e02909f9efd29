/**
 * Payrexx's wire formats as the simulator writes and reads them: the answer envelope, times with a fixed
 * offset, PHP bracket form fields, the fee, and the payer a payment page collects (facts from the ordering
 * service's `services/ordering/src/payment/payrexx-contract.ts`).
 */
import { parseBracketForm } from '@sports-timing/shared/src/bracket-form';
import { jsonObject, type SimRequest, type SimResponse } from '@sports-timing/shared/src/sim-server';
import { createHash } from 'node:crypto';
import type { Transaction, TransactionContact } from './types';

/** A success answer in Payrexx's envelope `{ status: 'success', data }`. */
export const ok = (data: unknown[]): SimResponse => ({ status: 200, json: { status: 'success', data } });

/** Payrexx's error body `{ status: 'error', message }`. */
export const errorBody = (message: string) => ({ status: 'error', message });

/** ISO 8601 with a fixed offset of `offsetMinutes` (`2025-01-13T10:12:44+01:00`). */
export function payrexxTime(ms: number, offsetMinutes: number): string {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** `YYYY-MM-DD HH:MM:SS` UTC (a `filterDatetimeUtc*` value) → epoch ms; NaN when malformed. */
export function utcFilter(v: string): number {
  return /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(v) ? Date.parse(`${v.replace(' ', 'T')}Z`) : NaN;
}

/** Flattens an object to PHP form fields: `transaction[invoice][products][0][name]=…`; nulls are left out. */
export function toFormFields(value: unknown, prefix: string, out: [string, string][] = []): [string, string][] {
  if (value === null || value === undefined) return out;
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) toFormFields(v, `${prefix}[${k}]`, out);
  } else {
    out.push([prefix, typeof value === 'boolean' ? (value ? '1' : '0') : `${value as string | number}`]);
  }
  return out;
}

/** Parses a form body with PHP bracket names (`fields[email][defaultValue]`) or a JSON body into an object; throws SyntaxError. */
export function bodyFields(req: SimRequest): Record<string, unknown> {
  const type = String(req.headers['content-type'] ?? '');
  return type.includes('application/x-www-form-urlencoded') ? parseBracketForm(req.body) : jsonObject(req.body);
}

/** The simulated provider fee of a charge of `amount` cents, in cents: 2.9 % plus 30. */
export function fee(amount: number): number {
  return Math.round(amount * 0.029) + 30;
}

/** A payer as the payment page collects them: billing and delivery address. */
export function defaultContact(email: string | null, id: number): TransactionContact {
  const billing = {
    title: 'mister',
    firstname: 'Max',
    lastname: 'Muster',
    company: 'Muster Sport GmbH',
    street: 'Hauptstrasse 1',
    zip: '8000',
    place: 'Zürich',
    country: 'Switzerland',
    countryISO: 'CH',
  };
  return {
    id,
    uuid: createHash('sha256').update(`contact-${id}`).digest('hex').slice(0, 8),
    ...billing,
    phone: '+41 44 000 00 00',
    email,
    date_of_birth: '1980-01-01',
    ...Object.fromEntries(Object.entries(billing).map(([k, v]) => [`delivery_${k}`, v])),
  };
}

/** The page fields a payer filled in, as an invoice's `customFields` carries them. */
export function customFieldsOf(contact: TransactionContact | null): Transaction['invoice']['customFields'] {
  const out: Transaction['invoice']['customFields'] = {};
  let i = 1;
  for (const [k, v] of Object.entries(contact ?? {})) if (k !== 'id' && k !== 'uuid' && v !== null) out[String(i++)] = { name: k, value: String(v) };
  return out;
}
