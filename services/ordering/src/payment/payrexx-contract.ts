/**
 * Our contract of the Payrexx REST API v1 for the subset the service uses. Payrexx publishes no OpenAPI
 * description, so this module is written from its own sources (see docs/payrexx.md for the list and what is
 * still unverified). Each fact carries its source in a comment:
 *
 * - [SDK] the official PHP SDK `payrexx/payrexx-php` 2.x: `lib/Payrexx/Communicator.php` (URL shape, HTTP
 *   methods), `lib/Payrexx/CommunicationAdapter/CurlCommunication.php` (form encoding, `instance` in the
 *   query), `lib/Payrexx/Models/Request/*.php` (parameters), `lib/Payrexx/Models/Response/*.php` (answer
 *   fields, transaction status constants), `lib/Payrexx/Models/Base.php` (snake_case keys of answers map
 *   onto setters, e.g. `total_fees` → `setTotalFees`).
 * - [DOC-TX] Payrexx developer docs, webhook "Transaction" page (docs.payrexx.com/developer/guides/webhook/
 *   transaction): fields, `originalTransactionId`/`originalTransactionUuid` on refund transactions,
 *   ISO 8601 `time` with offset, `chargeback` status.
 * - [DOC-WH] Payrexx developer docs, "Notifications (Webhooks)" (developers.payrexx.com/docs/webhooks):
 *   JSON or "Normal (PHP-Post)" = `application/x-www-form-urlencoded`, events for transactions,
 *   subscriptions and payouts, changelog (Invoice `originalAmount`/`refundedAmount`, `refund_pending`,
 *   `uncaptured`, `payrexxFee`, `payoutUuid`, `refundable`/`partiallyRefundable`).
 * - [DOC-PO] Payrexx developer docs "Payout" (developers.payrexx.com/docs/payout) and webhook "Payout"
 *   (docs.payrexx.com/developer/guides/webhook/payout): `amount`, `total_fees`, `statement`, `status`,
 *   `date`, `destination`, `transfers[]` (`type`, `amount`, `date_time`, `items[]`, `transaction`),
 *   `merchant`, `is_manual_payout`, `mode`.
 * - [PLUGIN] the official WooCommerce (`src/Webhook/Dispatcher.php`) and Shopware 6
 *   (`src/Webhook/Dispatcher.php`) plugins: both read `transaction.id`, `transaction.status`,
 *   `transaction.invoice.referenceId`/`paymentRequestId`, re-fetch the transaction and compare statuses.
 * - [PIPEDREAM] the Pipedream Payrexx "Create Paylink" action lists `description` as required.
 *
 * The schemas are JSON Schema (draft 7, for ajv). Request schemas are closed (`additionalProperties:
 * false`) and built without the `readOnly` properties, so an unknown or read-only parameter fails; answer
 * schemas are closed too, so the simulator cannot drift from the contract. The client itself maps answers
 * leniently (unknown fields ignored, unknown statuses kept), because Payrexx adds fields and statuses
 * without notice [DOC-WH changelog].
 */

/** Transfer types of a payout [DOC-PO]. */
const PAYREXX_TRANSFER_TYPES = [
  'transaction',
  'transaction-reversal',
  'dispute',
  'dispute-reversal',
  'payout',
  'payout-reversal',
  'adjustment',
  'manual-adjustment',
  'payout-fee',
  'payout-reserve',
  'payout-reserve-reversal',
] as const;

/** Transfer item types: the transfer types plus fee types [DOC-PO]. */
const PAYREXX_TRANSFER_ITEM_TYPES = [
  ...PAYREXX_TRANSFER_TYPES,
  'transaction-fee',
  'transaction-fee-reversal',
  'application-fee',
  'application-fee-reversal',
  'transaction-currency-conversion-fee',
  'transaction-currency-conversion-fee-reversal',
  'dispute-fee',
  'dispute-fee-reversal',
  'dispute-currency-conversion-fee',
  'dispute-currency-conversion-fee-reversal',
] as const;

/** A JSON Schema object (draft 7). @internal */
export type JsonSchema = Record<string, unknown>;

const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const nullable = (s: JsonSchema): JsonSchema => ({ anyOf: [s, { type: 'null' }] });
/** Form values arrive as strings: `"1"`, `"0"` or a boolean in JSON. */
const boolish = { anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['0', '1', 'true', 'false'] }, { type: 'integer', enum: [0, 1] }] } as const;
/** Integers travel as digit strings in a form. */
const intish = { anyOf: [int, { type: 'string', pattern: '^-?[0-9]{1,15}$' }] } as const;
/**
 * Transaction time: `YYYY-MM-DD HH:MM:SS` [DOC-TX PHP example, SDK README] or ISO 8601 with an offset
 * (`2025-10-01T09:36:07+00:00`) [DOC-TX].
 */
const payrexxTime = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:?\\d{2})?$' } as const;

function closed(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { type: 'object', additionalProperties: false, required, properties };
}

/**
 * The request schema of an object schema: `readOnly` properties dropped, unknown properties refused,
 * `required` restricted to `writeRequired` (what the API needs on create).
 */
function requestSchemaOf(object: JsonSchema, writeRequired: string[]): JsonSchema {
  const props = object.properties as Record<string, JsonSchema>;
  const writable = Object.fromEntries(
    Object.entries(props)
      .filter(([, s]) => s.readOnly !== true)
      .map(([k, s]) => [k, s]),
  );
  return { type: 'object', additionalProperties: false, required: writeRequired, properties: writable };
}

/**
 * A paylink: Payrexx `Invoice` [SDK Request/Invoice.php parameters; Response/Invoice.php adds `hash`,
 * `link`, `status`, `createdAt`, `invoices`]. Payment page fields are `fields[<type>][defaultValue|mandatory|name]`
 * [SDK Request/Invoice.php addField]; `fields[<type>][value]` belongs to Gateway/Transaction, not Invoice
 * [SDK Request/Transaction.php addField].
 * @internal
 */
export const InvoiceSchema: JsonSchema = closed(
  {
    id: { ...int, readOnly: true },
    hash: { ...str, readOnly: true },
    link: { ...str, readOnly: true },
    status: { ...str, readOnly: true },
    createdAt: { ...int, readOnly: true },
    invoices: { type: 'array', readOnly: true },
    // [SDK Request/Invoice.php: "mandatory" currency, amount (cents: "multiplied by 100")]
    amount: intish,
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    // [SDK Request/Invoice.php optional]; `description` is required by the paylink reference [PIPEDREAM],
    // which also marks `title`, `referenceId` and `purpose` required (unverified: docs/payrexx.md)
    title: str,
    description: str,
    referenceId: str,
    purpose: str,
    name: str,
    buttonText: str,
    vatRate: { anyOf: [{ type: 'number' }, { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' }] },
    sku: str,
    successRedirectUrl: str,
    failedRedirectUrl: str,
    expirationDate: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
    fields: {
      type: 'object',
      additionalProperties: closed({ defaultValue: str, mandatory: boolish, name: str }),
    },
  },
  ['id', 'hash', 'link', 'status', 'amount', 'currency', 'createdAt'],
);

/** What we POST to `Invoice/` (form-encoded, brackets parsed). @internal */
export const InvoiceCreateRequestSchema: JsonSchema = requestSchemaOf(InvoiceSchema, ['amount', 'currency', 'description']);

/**
 * A checkout gateway [SDK Request/Gateway.php parameters; Response/Gateway.php adds `hash`, `link`, `status`,
 * `createdAt`, `invoices`]. It has no title or description; its page fields are `fields[<type>][value|name]`
 * [SDK Request/Gateway.php addField]. Not used by the order flow (the client offers it for checkouts).
 * @internal
 */
export const GatewaySchema: JsonSchema = closed(
  {
    id: { ...int, readOnly: true },
    hash: { ...str, readOnly: true },
    link: { ...str, readOnly: true },
    status: { ...str, readOnly: true },
    createdAt: { ...int, readOnly: true },
    invoices: { type: 'array', readOnly: true },
    amount: intish,
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    purpose: str,
    referenceId: str,
    vatRate: { anyOf: [{ type: 'number' }, { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' }] },
    sku: str,
    successRedirectUrl: str,
    failedRedirectUrl: str,
    cancelRedirectUrl: str,
    fields: { type: 'object', additionalProperties: closed({ value: str, name: str }) },
  },
  ['id', 'hash', 'link', 'status', 'amount', 'currency', 'createdAt'],
);

/** What we POST to `Gateway/` (form-encoded, brackets parsed). @internal */
export const GatewayCreateRequestSchema: JsonSchema = requestSchemaOf(GatewaySchema, ['amount', 'currency']);

/** The invoice part of a transaction [DOC-TX Invoice object; DOC-WH changelog 2021-10-12: `originalAmount`, `refundedAmount`, no `amount`]. */
const TransactionInvoiceSchema = closed({
  number: str,
  paymentRequestId: nullable(intish),
  referenceId: nullable(str),
  currency: str,
  originalAmount: intish,
  refundedAmount: intish,
  test: boolish,
  discount: nullable({ type: 'object' }),
  shippingAmount: nullable(intish),
  customFields: { type: ['object', 'array'] },
  products: {
    type: 'array',
    items: closed({
      name: str,
      description: nullable(str),
      quantity: intish,
      amount: intish,
      sku: nullable(str),
      vatRate: nullable({ type: ['number', 'string'] }),
    }),
  },
});

/** Contact of a transaction [DOC-TX Contact object]. */
const ContactSchema = closed({
  id: intish,
  uuid: str,
  title: nullable(str),
  firstname: nullable(str),
  lastname: nullable(str),
  company: nullable(str),
  street: nullable(str),
  zip: nullable(str),
  place: nullable(str),
  country: nullable(str),
  countryISO: nullable(str),
  phone: nullable(str),
  email: nullable(str),
  date_of_birth: nullable(str),
  delivery_title: nullable(str),
  delivery_firstname: nullable(str),
  delivery_lastname: nullable(str),
  delivery_company: nullable(str),
  delivery_street: nullable(str),
  delivery_zip: nullable(str),
  delivery_place: nullable(str),
  delivery_country: nullable(str),
  delivery_countryISO: nullable(str),
});

/**
 * A transaction as `GET Transaction/{id}/` answers it and as a webhook carries it [SDK Response/Transaction.php
 * fields; DOC-TX]. A refund is a transaction of its own with status `refunded`/`partially-refunded`,
 * `originalTransactionId` pointing at the charged transaction and the refunded amount as `amount` [DOC-TX].
 * `status` is an open string: an unknown value is valid [DOC-WH changelog shows statuses being added].
 * @internal
 */
export const TransactionSchema: JsonSchema = closed(
  {
    id: intish,
    uuid: str,
    time: payrexxTime,
    status: str,
    lang: nullable(str),
    psp: nullable(str),
    pspId: nullable(intish),
    mode: { type: 'string', enum: ['TEST', 'LIVE'] },
    type: str,
    amount: intish,
    currency: str,
    referenceId: nullable(str),
    refundable: boolish,
    partiallyRefundable: boolish,
    payrexxFee: intish,
    fee: intish,
    pageUuid: nullable(str),
    payoutUuid: nullable(str),
    preAuthorizationId: nullable(intish),
    originalTransactionId: nullable(intish),
    originalTransactionUuid: nullable(str),
    metadata: { type: ['object', 'array'] },
    payment: closed({ brand: nullable(str), cardNumber: nullable(str), expiry: nullable(str), wallet: nullable(str) }),
    invoice: TransactionInvoiceSchema,
    contact: nullable(ContactSchema),
    subscription: nullable({ type: 'object' }),
    instanceName: str,
    instanceUuid: str,
  },
  ['id', 'uuid', 'time', 'status', 'amount', 'invoice'],
);

/**
 * Query of `GET Transaction/` [SDK Request/Transaction.php]: `offset`, `limit`, `orderByTime` (`ASC`
 * default → oldest first; `DESC`), `filterDatetimeUtcGreaterThan`/`LessThan` (`Y-m-d H:i:s` in UTC),
 * `filterMyTransactionsOnly`. No `referenceId` filter exists. `instance` always [SDK CurlCommunication].
 * @internal
 */
export const TransactionListQuerySchema: JsonSchema = closed(
  {
    instance: str,
    offset: { type: 'string', pattern: '^[0-9]+$' },
    limit: { type: 'string', pattern: '^[0-9]+$' },
    orderByTime: { type: 'string', enum: ['ASC', 'DESC'] },
    filterDatetimeUtcGreaterThan: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$' },
    filterDatetimeUtcLessThan: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$' },
    filterMyTransactionsOnly: boolish,
  },
  ['instance'],
);

/** Query of every other call: only `instance` [SDK CurlCommunication: GET/DELETE params in the URL, else `?instance=`]. @internal */
export const InstanceQuerySchema: JsonSchema = closed({ instance: str }, ['instance']);

/** A transfer within a payout [DOC-PO]. Amounts in cents, signed as they change the payout. */
const TransferSchema = closed(
  {
    type: { type: 'string', enum: [...PAYREXX_TRANSFER_TYPES] },
    amount: int,
    date_time: str,
    items: { type: 'array', items: closed({ type: { type: 'string', enum: [...PAYREXX_TRANSFER_ITEM_TYPES] }, amount: int }, ['type', 'amount']) },
    // "transaction (if related to transaction)" [DOC-PO]; its inner shape is not documented (docs/payrexx.md).
    transaction: nullable(
      closed({ id: int, uuid: str, referenceId: nullable(str), time: payrexxTime, amount: int, currency: str, originalTransactionId: nullable(int) }, [
        'id',
        'uuid',
      ]),
    ),
  },
  ['type', 'amount', 'date_time', 'items'],
);

/**
 * A payout [SDK Response/Payout.php; DOC-PO]: `amount` and `total_fees` integer cents, `statement`,
 * `status`, `date` (`YYYY-MM-DD`), `transfers[]`, `is_manual_payout`. `status` is an open string.
 * @internal
 */
export const PayoutSchema: JsonSchema = closed(
  {
    uuid: { anyOf: [str, int] },
    object: { type: 'string', enum: ['payout'] },
    mode: nullable(str),
    amount: int,
    total_fees: int,
    currency: str,
    date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
    statement: nullable(str),
    status: str,
    destination: nullable(closed({ type: str, iban: str, account_holder: str })),
    transfers: { type: 'array', items: TransferSchema },
    merchant: nullable({ type: 'object' }),
    payer: nullable(str),
    is_manual_payout: { type: 'boolean' },
  },
  ['uuid', 'amount', 'total_fees', 'currency', 'date', 'status', 'transfers', 'is_manual_payout'],
);

/** Every answer: `{ status: 'success', data: [...] }` or `{ status: 'error', message }` [SDK Communicator performApiRequest]. @internal */
export function envelopeOf(item: JsonSchema): JsonSchema {
  return {
    oneOf: [
      closed({ status: { const: 'success' }, data: { type: 'array', items: item } }, ['status', 'data']),
      closed({ status: { const: 'error' }, message: str, reason: str }, ['status', 'message']),
    ],
  };
}

/** Answer of `DELETE Invoice/{id}/`: the id of what went. @internal */
export const DeletedSchema: JsonSchema = closed({ id: int }, ['id']);

/** Answer of `GET SignatureCheck/` [SDK Response/SignatureCheck.php: id]. @internal */
export const SignatureCheckSchema: JsonSchema = closed({ id: int }, ['id']);

/**
 * Webhook bodies [DOC-WH]: a transaction event `{ transaction }`, a payout event `{ payout }` or a
 * subscription event `{ subscription }`. Form-encoded bodies nest with brackets (`transaction[invoice][…]`)
 * and carry every value as a string, which the `intish`/`boolish` schemas admit (`parseBracketForm` of
 * `@sports-timing/shared/src/bracket-form` reads them).
 * @internal
 */
export const WebhookBodySchema: JsonSchema = {
  oneOf: [
    closed({ transaction: TransactionSchema }, ['transaction']),
    closed({ payout: PayoutSchema }, ['payout']),
    closed({ subscription: { type: 'object' } }, ['subscription']),
  ],
};
