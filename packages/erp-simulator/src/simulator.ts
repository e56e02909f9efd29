/**
 * ERP simulator: a weclapp-style REST v1 subset over real HTTP, in memory, one data set per tenant.
 *
 * API, per tenant under `/<prefix>/webapp/api/v1` (main tenant: no prefix, `/webapp/api/v1`; sandbox:
 * `/sandbox/webapp/api/v1`), header `AuthenticationToken` (missing or wrong → 401):
 * - `GET /article`, `/article/count`, `/article/id/{id}`, `PUT /article/id/{id}`
 * - `GET /party`, `/party/count`, `/party/id/{id}` (parties in their customer role); the deprecated `GET /customer`, `/customer/count`, `/customer/id/{id}` answer the same parties in the older customer shape
 * - `GET|POST /salesOrder`, `GET /salesOrder/count`, `GET|PUT /salesOrder/id/{id}`
 * - `GET|POST /quotation`, `GET /quotation/count`, `GET /quotation/id/{id}`
 * - `GET /salesInvoice`, `/salesInvoice/count`, `/salesInvoice/id/{id}`
 * - `GET /customAttributeDefinition`, `/customAttributeDefinition/id/{id}`
 * - `GET /propertyTranslation/readPropertyTranslations?entityName=article&entityId=…[&locale=…]`: an article's
 *   `name` and `description` in the other languages
 * Entities are answered as weclapp answers them (`wire.ts`): no `null`s, weclapp's always-present properties
 * filled. A sales order is created with its main items; a set's sub items are added by a `PUT` whose new items
 * name an existing item as `parentItemId` (ids exist only after the creation). A position's `unitPrice` is kept
 * only with `manualUnitPrice: true`, else the article's EUR price applies (weclapp prices it itself).
 * Lists answer `{ "result": [...] }`, counts `{ "result": n }`; filters, sort and paging as in `query.ts`.
 * `PUT` updates the properties it is given (as weclapp's `ignoreMissingProperties=true`); a `version` that
 * is not the entity's current one → 409 (optimistic lock), and every successful write increments
 * `version`. Errors: `{ type, title, status, detail, error }` (weclapp sends `error`; newer versions the
 * RFC 7807 fields).
 * Writes notify the tenant's subscribed webhook URLs with `{ entityId, entityName, type }` (unsigned, like
 * weclapp). A sales order whose shipment is booked (control API `shipped: true`) becomes `shipped` and gets a sales
 * invoice dated today (Europe/Berlin).
 *
 * Control API (loopback only; tenant by `?tenant=main|sandbox`, default `main`), besides the fault
 * injection of `@sports-timing/shared`'s `sim-server.ts`:
 * - `POST /__control/subscribe {url}` / `POST /__control/unsubscribe {url}` — webhook subscriptions.
 * - `POST /__control/webhook {url, entityName, entityId, type}` — delivers one webhook now; answers the
 *   delivery record (receiver status or error).
 * - `PATCH /__control/{article|customer|salesOrder}/{id or number}` — changes fields like an ERP user
 *   would: top-level properties, plus `attributes: { <attributeKey>: value }` for custom attributes (select
 *   values by their text); bumps `version` and `lastModifiedDate`, delivers the `update` webhook to every
 *   subscription and answers `{ entity, deliveries }`.
 * - `POST /__control/reset` — back to the seed; subscriptions, deliveries and faults cleared.
 * - `GET /__control/state` — all tenants' entities, subscriptions and webhook deliveries.
 */
import { ATTRIBUTE_KEYS, DEFAULT_TOKENS, TENANT_TIME_ZONE, VAT_RATE_PERCENT, attributeValue, localMidnightMs, seedTenant, toEuros } from './seed';
import { QueryError, applyFilters, pageOf, parseListQuery } from './query';
import { SimServer, jsonObject, postWebhook, withoutQuery, type SimRequest, type SimResponse } from '@sports-timing/shared/src/sim-server';
import { toCustomerView, toWire } from './wire';
import { positionAmount, shippingAmount } from './amounts';
import { loadWeclappContract } from '@sports-timing/shared/src/weclapp-contract';
import { EU_COUNTRIES } from '@sports-timing/shared/src/eu-countries';
import {
  SALES_ORDER_STATUSES,
  type Article,
  type CustomAttributeValue,
  type Customer,
  type EntityName,
  type ErpErrorBody,
  type ErpTenantState,
  type Quotation,
  type RecordAddress,
  type RecordItem,
  type SalesInvoice,
  type SalesOrder,
  type ShippingCostItem,
  type TenantData,
} from './types';

/** A tenant of the simulator. */
interface ErpTenantOptions {
  /** `main` or `sandbox` (any word; used by `?tenant=`). */
  name: string;
  /** Path prefix before `/webapp/api/v1`, empty for none. */
  prefix: string;
  /** The tenant's `AuthenticationToken`. */
  token: string;
}

/** Options of {@link createErpSimulator}. */
export interface ErpSimulatorOptions {
  /** Default 0 (a free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default: `main` (no prefix) and `sandbox` (prefix `sandbox`) with {@link DEFAULT_TOKENS}. */
  tenants?: ErpTenantOptions[];
  /** Deadline of one webhook delivery in ms; default 5000. */
  webhookTimeoutMs?: number;
  /** Console-style log line sink; default none. */
  log?: (line: string) => void;
  /** Token the control API (`/__control/…`) requires in `X-Control-Token`; absent → loopback clients only. */
  controlToken?: string;
}

/** A request or answer that departs from weclapp's contract. */
export interface ErpContractViolation {
  side: 'request' | 'answer';
  method: string;
  /** The contract's path template, e.g. `/salesOrder/id/{id}`. */
  path: string;
  errors: string[];
}

interface PendingExchange {
  side: 'request' | 'answer';
  method: string;
  /** Path below the API root, e.g. `/salesOrder/id/1001`. */
  apiPath: string;
  /** JSON text. */
  body: string;
}

/** One webhook delivery attempt. */
export interface ErpWebhookDelivery {
  tenant: string;
  url: string;
  entityName: string;
  entityId: string;
  type: string;
  /** Receiver's HTTP status; null when it did not answer. */
  status: number | null;
  error: string | null;
  at: string;
}

/** Answer of `PATCH /__control/{article|customer|salesOrder}/{id or number}`: the changed entity and the `update` webhook deliveries. */
export interface ErpPatchAnswer<T extends Article | Customer | SalesOrder = Article | Customer | SalesOrder> {
  entity: T;
  deliveries: ErpWebhookDelivery[];
}

/** Answer of `GET /__control/state` ({@link ErpSimulator.state}): every tenant by name, all webhook deliveries, the attribute keys. */
export interface ErpSimulatorState {
  tenants: Record<string, ErpTenantState>;
  deliveries: ErpWebhookDelivery[];
  contractViolations: ErpContractViolation[];
  attributeKeys: typeof ATTRIBUTE_KEYS;
}

interface Tenant {
  options: ErpTenantOptions;
  data: TenantData;
  subscriptions: Set<string>;
  nextId: () => string;
  orderSeq: number;
  quotationSeq: number;
  invoiceSeq: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly kind = 'bad_request',
  ) {
    super(message);
  }
}

function errorBody(
  status: number,
  message: string,
  kind = status === 401 ? 'unauthorized' : status === 404 ? 'not_found' : status === 409 ? 'optimistic_lock' : 'error',
): ErpErrorBody {
  return { type: `/webapp/view/api/errors.html#${kind}`, title: message, status, detail: message, error: message };
}

const ENTITY_NUMBER_FIELD: Partial<Record<EntityName, string>> = {
  article: 'articleNumber',
  customer: 'customerNumber',
  salesOrder: 'orderNumber',
  quotation: 'quotationNumber',
  salesInvoice: 'invoiceNumber',
};

/** Properties a client may write with PUT, per entity. */
const WRITABLE: Partial<Record<EntityName, readonly string[]>> = {
  article: [
    'articleNumber',
    'name',
    'description',
    'active',
    'articleType',
    'unitName',
    'taxRateType',
    'articlePrices',
    'customAttributes',
    'salesBillOfMaterialItems',
    'translations',
  ],
  salesOrder: [
    'status',
    'deliveryAddress',
    'invoiceAddress',
    'commission',
    'orderNumberAtCustomer',
    'customAttributes',
    'orderItems',
    'shippingCostItems',
    'recordCurrencyId',
    'headerDiscount',
  ],
  customer: ['company', 'email', 'phone', 'website', 'addresses', 'customAttributes', 'customerBlocked'],
};
/** Read-only properties: ignored when written through the API (as weclapp does); `shipped` and `invoiced` are set by the ERP's own processes (the control API's `shipped` stands for booking a shipment). */
/** VAT percent by an article's `taxRateType`, for positions that name no `taxId`. */
const RATE_OF_TYPE: Record<string, string> = { STANDARD: '19', REDUCED: '7', ZERO: '0' };

const READ_ONLY = new Set(['id', 'version', 'createdDate', 'lastModifiedDate', 'shipped', 'invoiced', 'paid', 'netAmount', 'grossAmount']);

/** The ERP simulator. Create with {@link createErpSimulator}. */
export class ErpSimulator {
  /** HTTP shell with fault injection (`fail`, `delay`, `down`, `up`). */
  readonly server: SimServer;
  /** Every webhook delivery, oldest first. */
  readonly deliveries: ErpWebhookDelivery[] = [];
  private readonly pendingExchanges: PendingExchange[] = [];
  private readonly violations: ErpContractViolation[] = [];
  private readonly tenants = new Map<string, Tenant>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly webhookTimeoutMs: number;
  private readonly log: (line: string) => void;

  constructor(private readonly options: ErpSimulatorOptions = {}) {
    this.webhookTimeoutMs = options.webhookTimeoutMs ?? 5_000;
    this.log = options.log ?? (() => undefined);
    this.server = new SimServer({
      port: options.port ?? 0,
      host: options.host ?? '127.0.0.1',
      api: (req) => this.api(req),
      control: (req) => this.control(req),
      controlToken: options.controlToken,
      errorBody: (status, message) => errorBody(status, message),
      // weclapp's load management reports how long a request waited in its queue.
      waitHeaders: (ms) => ({ 'x-weclapp-wait-ms': String(ms), 'x-weclapp-wait-reason': 'concurrency' }),
    });
    this.reset();
  }

  /** Starts listening. */
  async start(): Promise<this> {
    await this.server.start();
    return this;
  }

  /** Stops listening and waits for webhook deliveries in flight. */
  async stop(): Promise<void> {
    await this.server.stop();
    await this.idle();
  }

  /** The bound port. */
  get port(): number {
    return this.server.port;
  }

  /** Base URL of a tenant's API, e.g. `http://127.0.0.1:8090/sandbox/webapp/api/v1`. */
  baseUrl(tenant = 'main'): string {
    const t = this.tenantOrThrow(tenant);
    return `${this.server.origin}${t.options.prefix ? `/${t.options.prefix}` : ''}/webapp/api/v1`;
  }

  /** The live data of a tenant (tests may read and change it directly). */
  data(tenant = 'main'): TenantData {
    return this.tenantOrThrow(tenant).data;
  }

  /** Resolves once no webhook delivery is in flight. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Back to the seed: data, subscriptions, deliveries and faults. */
  reset(): void {
    const tenantOptions = this.options.tenants ?? [
      { name: 'main', prefix: '', token: DEFAULT_TOKENS.main },
      { name: 'sandbox', prefix: 'sandbox', token: DEFAULT_TOKENS.sandbox },
    ];
    this.tenants.clear();
    const now = Date.now();
    for (const options of tenantOptions) {
      let seq = 1000;
      const nextId = () => String(++seq);
      this.tenants.set(options.name, {
        options,
        data: seedTenant(nextId, now),
        subscriptions: new Set(),
        nextId,
        orderSeq: 20000,
        quotationSeq: 30000,
        invoiceSeq: 100,
      });
    }
    this.deliveries.length = 0;
    this.pendingExchanges.length = 0;
    this.violations.length = 0;
    this.server.clearFaults();
  }

  /** Subscribes a webhook URL to every change of the tenant's entities. */
  subscribe(url: string, tenant = 'main'): void {
    this.tenantOrThrow(tenant).subscriptions.add(url);
  }

  /** Sends `{ entityId, entityName, type }` to `url` (one attempt) and records it. */
  async deliverWebhook(url: string, event: { entityName: string; entityId: string; type: string }, tenant = 'main'): Promise<ErpWebhookDelivery> {
    const body = JSON.stringify({ entityId: event.entityId, entityName: event.entityName, type: event.type });
    const outcome = await postWebhook(url, body, 'application/json', this.webhookTimeoutMs);
    const delivery: ErpWebhookDelivery = { tenant, url, ...event, ...outcome, at: new Date().toISOString() };
    this.deliveries.push(delivery);
    this.log(`webhook ${event.entityName} ${event.entityId} ${event.type} → ${withoutQuery(url)}: ${outcome.status ?? outcome.error}`);
    return delivery;
  }

  /**
   * Changes an entity as an ERP user would (fields, `attributes` by key), bumps its version and delivers
   * the `update` webhook to every subscription. Answers the changed entity and the deliveries.
   */
  async patchEntity(
    entityName: 'article' | 'customer' | 'salesOrder',
    idOrNumber: string,
    changes: Record<string, unknown>,
    tenant = 'main',
  ): Promise<{ entity: object; deliveries: ErpWebhookDelivery[] }> {
    const t = this.tenantOrThrow(tenant);
    const entity = this.findByIdOrNumber(t, entityName, idOrNumber);
    const { attributes, ...fields } = changes;
    const merged: Record<string, unknown> = { ...fields };
    if (attributes !== undefined) {
      if (attributes === null || typeof attributes !== 'object') throw new HttpError(400, 'attributes must be an object');
      const current: CustomAttributeValue[] = [...(entity as unknown as { customAttributes: CustomAttributeValue[] }).customAttributes];
      for (const [key, value] of Object.entries(attributes)) {
        if (typeof value !== 'boolean' && typeof value !== 'string') throw new HttpError(400, `attributes.${key}: boolean or string expected`);
        let v: CustomAttributeValue;
        try {
          v = attributeValue(t.data.customAttributeDefinition.values(), key, value);
        } catch (err) {
          throw new HttpError(400, (err as Error).message);
        }
        const i = current.findIndex((c) => c.attributeDefinitionId === v.attributeDefinitionId);
        if (i >= 0) current[i] = v;
        else current.push(v);
      }
      merged.customAttributes = current;
    }
    let updated = this.update(t, entityName, entity.id, merged, { checkVersion: false, notify: false });
    // Booking a shipment (a warehouse process, not an API write): the order is `shipped` and gets its invoice.
    if (entityName === 'salesOrder' && fields.shipped === true) updated = this.ship(t, entity.id);
    const deliveries = await Promise.all(
      [...t.subscriptions].map((url) => this.deliverWebhook(url, { entityName, entityId: entity.id, type: 'update' }, tenant)),
    );
    return { entity: updated, deliveries };
  }

  private tenantOrThrow(name: string): Tenant {
    const t = this.tenants.get(name);
    if (!t) throw new HttpError(404, `unknown tenant ${name}`);
    return t;
  }

  private findByIdOrNumber(t: Tenant, entityName: EntityName, idOrNumber: string): { id: string } {
    const collection = t.data[entityName] as Map<string, { id: string }>;
    const byId = collection.get(idOrNumber);
    if (byId) return byId;
    const field = ENTITY_NUMBER_FIELD[entityName];
    const byNumber = field ? [...collection.values()].find((e) => (e as unknown as Record<string, unknown>)[field] === idOrNumber) : undefined;
    if (!byNumber) throw new HttpError(404, `${entityName} ${idOrNumber} not found`);
    return byNumber;
  }

  private notify(t: Tenant, entityName: string, entityId: string, type: 'create' | 'update'): void {
    for (const url of t.subscriptions) {
      const p = this.deliverWebhook(url, { entityName, entityId, type }, t.options.name).finally(() => this.pending.delete(p));
      this.pending.add(p);
    }
  }

  // ───────────── API ─────────────

  private async api(req: SimRequest): Promise<SimResponse> {
    const m = /^\/(?:([\w-]+)\/)?webapp\/api\/v1\/(.+?)\/?$/.exec(req.path);
    const tenant = m ? [...this.tenants.values()].find((t) => t.options.prefix === (m[1] ?? '')) : undefined;
    if (!m || !tenant) return { status: 404, json: errorBody(404, `no API at ${req.path}`) };
    const token = req.headers['authenticationtoken'];
    if (typeof token !== 'string' || token !== tenant.options.token) return { status: 401, json: errorBody(401, 'invalid or missing AuthenticationToken') };
    const apiPath = `/${m[2]}`;
    if (req.body.trim() !== '') this.recordExchange({ side: 'request', method: req.method, apiPath, body: req.body });
    let answer: SimResponse;
    try {
      answer = this.route(tenant, req, m[2].split('/'));
    } catch (err) {
      if (err instanceof HttpError) return { status: err.status, json: errorBody(err.status, err.message) };
      if (err instanceof QueryError) return { status: 400, json: errorBody(400, err.message) };
      throw err;
    }
    if (answer.status < 300 && answer.json !== undefined)
      this.recordExchange({ side: 'answer', method: req.method, apiPath, body: JSON.stringify(answer.json) });
    return answer;
  }

  /** Keeps a request or answer for the contract check (validated when {@link contractViolations} is read; at most 5000 wait). */
  private recordExchange(x: PendingExchange): void {
    this.pendingExchanges.push(x);
    if (this.pendingExchanges.length > 5_000) this.pendingExchanges.shift();
  }

  /**
   * Every departure from weclapp's published contract seen on the API so far, oldest first: requests a client
   * sent (unknown, read-only, deprecated or missing properties) and answers the simulator gave. Checked when
   * read (compiling the contract's validators takes seconds, which no request should wait for); tests assert it
   * stays empty (docs/weclapp.md "Contract").
   */
  get contractViolations(): ErpContractViolation[] {
    const contract = loadWeclappContract();
    for (const x of this.pendingExchanges.splice(0)) {
      let errors: string[] | null;
      try {
        const body: unknown = JSON.parse(x.body);
        errors = x.side === 'request' ? contract.requestErrors(x.method, x.apiPath, body) : contract.answerErrors(x.method, x.apiPath, body);
      } catch {
        continue; // not JSON: answered as a 400 anyway
      }
      if (errors === null) errors = ['not an operation of the contract'];
      if (errors.length > 0) this.violations.push({ side: x.side, method: x.method, path: contract.templateOf(x.method, x.apiPath) ?? x.apiPath, errors });
    }
    return [...this.violations];
  }

  private route(t: Tenant, req: SimRequest, parts: string[]): SimResponse {
    const [requested, second, id, ...rest] = parts;
    // Parties in their customer role live in the `customer` collection: `/party` answers them as parties,
    // the deprecated `/customer` in its older shape.
    const entity = requested === 'party' ? 'customer' : requested;
    const wire = (n: EntityName, e: object) => (n === 'customer' && requested === 'customer' ? toCustomerView(e) : toWire(n, e));
    if (entity === 'propertyTranslation' && second === 'readPropertyTranslations' && id === undefined && req.method === 'GET')
      return this.translations(t, req.query);
    const readable: EntityName[] = ['article', 'customer', 'salesOrder', 'quotation', 'salesInvoice', 'customAttributeDefinition', 'currency', 'tax'];
    if (!readable.includes(entity as EntityName) || rest.length > 0) throw new HttpError(404, `unknown endpoint ${parts.join('/')}`);
    const name = entity as EntityName;
    const collection = t.data[name] as Map<string, { id: string }>;
    if (second === undefined) {
      if (req.method === 'GET') {
        const q = parseListQuery(req.query);
        return { status: 200, json: { result: pageOf(applyFilters(collection.values(), q), q).map((e) => wire(name, e)) } };
      }
      if (req.method === 'POST' && name === 'salesOrder') return this.createSalesOrder(t, jsonObject(req.body));
      if (req.method === 'POST' && name === 'quotation') return this.createQuotation(t, jsonObject(req.body));
      throw new HttpError(405, `${req.method} not allowed on ${name}`);
    }
    if (second === 'count' && id === undefined) {
      if (req.method !== 'GET') throw new HttpError(405, `${req.method} not allowed`);
      return { status: 200, json: { result: applyFilters(collection.values(), parseListQuery(req.query)).length } };
    }
    if (second === 'id' && id !== undefined) {
      const found = collection.get(id);
      if (req.method === 'GET') {
        if (!found) throw new HttpError(404, `${name} with id ${id} not found`);
        return { status: 200, json: wire(name, found) };
      }
      if (req.method === 'PUT' && WRITABLE[name]) {
        if (!found) throw new HttpError(404, `${name} with id ${id} not found`);
        return { status: 200, json: wire(name, this.update(t, name, id, jsonObject(req.body), { checkVersion: true, notify: true })) };
      }
      throw new HttpError(405, `${req.method} not allowed on ${name}/id`);
    }
    throw new HttpError(404, `unknown endpoint ${parts.join('/')}`);
  }

  /** weclapp's property translations of an article: `name` and `description` per locale (optionally one locale). */
  private translations(t: Tenant, query: URLSearchParams): SimResponse {
    const entityName = query.get('entityName');
    const entityId = query.get('entityId');
    if (!entityName || !entityId) throw new HttpError(400, 'entityName and entityId are required');
    if (entityName !== 'article') return { status: 200, json: { result: [] } };
    const article = t.data.article.get(entityId);
    if (!article) throw new HttpError(404, `article with id ${entityId} not found`);
    const locale = query.get('locale');
    const texts = (article.translations ?? []).filter((x) => !locale || x.locale === locale);
    const result = (['name', 'description'] as const).map((propertyName) => ({
      propertyName,
      values: texts.filter((x) => x[propertyName]).map((x) => ({ locale: x.locale, text: x[propertyName] })),
    }));
    return { status: 200, json: { result } };
  }

  private checkCustomAttributes(t: Tenant, value: unknown, entityName: string): CustomAttributeValue[] {
    if (!Array.isArray(value)) throw new HttpError(400, 'customAttributes must be an array');
    return value.map((v, i) => {
      const a = v as CustomAttributeValue;
      const def = a && typeof a === 'object' ? t.data.customAttributeDefinition.get(String(a.attributeDefinitionId)) : undefined;
      if (!def) throw new HttpError(400, `customAttributes[${i}]: unknown attributeDefinitionId`);
      if (def.attributeType === 'BOOLEAN' && typeof a.booleanValue !== 'boolean') throw new HttpError(400, `customAttributes[${i}]: booleanValue required`);
      if (!(def.entities ?? []).includes(entityName)) throw new HttpError(400, `customAttributes[${i}]: ${def.attributeKey} does not apply to ${entityName}`);
      if (def.attributeType === 'LIST' && !(def.selectableValues ?? []).some((s) => s.id === a.selectedValueId))
        throw new HttpError(400, `customAttributes[${i}]: selectedValueId is not a value of ${def.attributeKey}`);
      if ((def.attributeType === 'STRING' || def.attributeType === 'LARGE_TEXT') && typeof a.stringValue !== 'string')
        throw new HttpError(400, `customAttributes[${i}]: stringValue required`);
      return a;
    });
  }

  private update(t: Tenant, name: EntityName, id: string, body: Record<string, unknown>, opts: { checkVersion: boolean; notify: boolean }): object {
    const collection = t.data[name] as unknown as Map<string, Record<string, unknown> & { id: string; version: string }>;
    const current = collection.get(id)!;
    const sentVersion = body.version === undefined ? undefined : JSON.stringify(body.version).replace(/^"|"$/g, '');
    if (opts.checkVersion && sentVersion !== undefined && sentVersion !== current.version) {
      throw new HttpError(409, `optimistic lock error: ${name} ${id} has version ${current.version}, the request sent ${sentVersion}`);
    }
    const writable = WRITABLE[name] ?? [];
    const next: Record<string, unknown> = { ...current };
    for (const [key, value] of Object.entries(body)) {
      if (READ_ONLY.has(key)) continue;
      if (!writable.includes(key)) throw new HttpError(400, `property ${key} of ${name} cannot be written`);
      const old = current[key];
      if (old !== null && old !== undefined && value !== null && (Array.isArray(old) ? !Array.isArray(value) : typeof old !== typeof value)) {
        throw new HttpError(400, `property ${key}: invalid value`);
      }
      next[key] = value;
    }
    if (body.customAttributes !== undefined) next.customAttributes = this.checkCustomAttributes(t, body.customAttributes, name);
    if (name === 'salesOrder') {
      const country = (next.deliveryAddress as RecordAddress | undefined)?.countryCode;
      if (body.orderItems !== undefined)
        next.orderItems = this.items(t, body.orderItems, 'orderItems', (current.orderItems as RecordItem[] | undefined) ?? [], country);
      if (body.shippingCostItems !== undefined) next.shippingCostItems = this.shippingCostItems(t, body.shippingCostItems);
      if (body.recordCurrencyId !== undefined) this.checkCurrency(t, body.recordCurrencyId);
      if (body.headerDiscount !== undefined) this.checkDecimal(body.headerDiscount, 'headerDiscount');
      Object.assign(
        next,
        this.totals(t, next.orderItems as RecordItem[], next.shippingCostItems as ShippingCostItem[] | undefined, next.headerDiscount as string | undefined),
      );
    }
    if (name === 'article' && next.articleNumber !== current.articleNumber && [...collection.values()].some((a) => a.articleNumber === next.articleNumber)) {
      throw new HttpError(400, `articleNumber ${String(next.articleNumber)} already exists`);
    }
    if (name === 'salesOrder' && !SALES_ORDER_STATUSES.includes(next.status as SalesOrder['status']))
      throw new HttpError(400, `status must be one of ${SALES_ORDER_STATUSES.join(', ')}`);
    next.version = String(Number(current.version) + 1);
    next.lastModifiedDate = Math.max(Date.now(), Number(current.lastModifiedDate) + 1);
    collection.set(id, next as typeof current);
    if (opts.notify) this.notify(t, name, id, 'update');
    return next;
  }

  /** Marks sales order `id` shipped (and invoiced, with its sales invoice) once; returns it. */
  private ship(t: Tenant, id: string): SalesOrder {
    const order = t.data.salesOrder.get(id)!;
    if (order.shipped) return order;
    const next: SalesOrder = {
      ...order,
      shipped: true,
      invoiced: true,
      version: String(Number(order.version) + 1),
      lastModifiedDate: Math.max(Date.now(), order.lastModifiedDate + 1),
    };
    t.data.salesOrder.set(id, next);
    this.invoiceSalesOrder(t, next);
    return next;
  }

  private customerOf(t: Tenant, body: Record<string, unknown>): Customer {
    const customer =
      typeof body.customerId === 'string'
        ? t.data.customer.get(body.customerId)
        : typeof body.customerNumber === 'string'
          ? [...t.data.customer.values()].find((c) => c.customerNumber === body.customerNumber)
          : undefined;
    if (!customer) throw new HttpError(400, 'customerId or customerNumber of an existing customer is required');
    if (customer.customerBlocked) throw new HttpError(400, `customer ${customer.customerNumber} is blocked`);
    return customer;
  }

  /**
   * Validates new positions; amounts net euros. `unitPrice` is kept only with `manualUnitPrice: true`, else the
   * article's EUR price applies. `parentItemId` must name one of `existing` (items already on the document).
   */
  private items(t: Tenant, raw: unknown, field: string, existing: RecordItem[] = [], deliveryCountry?: string): RecordItem[] {
    if (!Array.isArray(raw)) throw new HttpError(400, `${field} must be an array`);
    const items: RecordItem[] = [];
    raw.forEach((r: unknown, i) => {
      const it = (r ?? {}) as Record<string, unknown>;
      if (typeof it.id === 'string') {
        const kept = existing.find((x) => x.id === it.id);
        if (!kept) throw new HttpError(400, `${field}[${i}].id ${it.id} is not an item of this document`);
        items.push(kept);
        return;
      }
      if ('parentPositionNumber' in it || 'paid' in it) throw new HttpError(400, `${field}[${i}]: unknown property`);
      const article =
        typeof it.articleId === 'string'
          ? t.data.article.get(it.articleId)
          : typeof it.articleNumber === 'string'
            ? [...t.data.article.values()].find((a) => a.articleNumber === it.articleNumber)
            : undefined;
      if (!article) throw new HttpError(400, `${field}[${i}]: articleId of an existing article is required`);
      const quantity = Number(it.quantity);
      if (!Number.isFinite(quantity) || quantity <= 0) throw new HttpError(400, `${field}[${i}].quantity must be a positive number`);
      const listPrice = article.articlePrices?.find((p) => p.currencyName === 'EUR')?.price ?? '0';
      const manual = it.manualUnitPrice === true && it.unitPrice !== undefined;
      const price = manual ? String(it.unitPrice) : listPrice;
      if (!/^-?\d+(\.\d{1,5})?$/.test(price)) throw new HttpError(400, `${field}[${i}].unitPrice must be a decimal`);
      const discountPercentage =
        it.discountPercentage === undefined ? undefined : this.checkDecimal(it.discountPercentage, `${field}[${i}].discountPercentage`);
      if (discountPercentage !== undefined && Number(discountPercentage) > 100)
        throw new HttpError(400, `${field}[${i}].discountPercentage must be at most 100`);
      const taxId = it.taxId === undefined ? this.determineTax(t, article.taxRateType, deliveryCountry) : this.checkTax(t, it.taxId, `${field}[${i}].taxId`);
      let parentItemId: string | undefined;
      if (it.parentItemId !== undefined) {
        parentItemId = typeof it.parentItemId === 'string' ? it.parentItemId : JSON.stringify(it.parentItemId);
        if (!existing.some((x) => x.id === parentItemId && x.parentItemId === undefined))
          throw new HttpError(400, `${field}[${i}].parentItemId must name a main item of this document`);
      }
      items.push({
        id: t.nextId(),
        positionNumber: typeof it.positionNumber === 'number' ? it.positionNumber : existing.length + items.length + 1,
        articleId: article.id,
        articleNumber: article.articleNumber,
        title: typeof it.title === 'string' ? it.title : article.name,
        ...(typeof it.description === 'string' ? { description: it.description } : {}),
        quantity: String(quantity),
        unitPrice: price,
        manualUnitPrice: manual,
        ...(discountPercentage !== undefined ? { discountPercentage } : {}),
        taxId,
        ...(parentItemId ? { parentItemId } : {}),
      });
    });
    return items;
  }

  /**
   * Prices a document's positions and shipping cost positions as weclapp does (`amounts.ts`): sets each one's
   * `netAmount`/`grossAmount` and answers the document's sums.
   */
  private totals(t: Tenant, items: RecordItem[] = [], shipping: ShippingCostItem[] = [], headerDiscount?: string): { netAmount: string; grossAmount: string } {
    const rate = (taxId: string | undefined) => (taxId ? (t.data.tax.get(taxId)?.taxValue ?? '0') : String(VAT_RATE_PERCENT));
    let net = 0;
    let gross = 0;
    for (const it of items) {
      const a = positionAmount(
        { quantity: it.quantity ?? '0', unitPrice: it.unitPrice ?? '0', discountPercentage: it.discountPercentage, taxValue: rate(it.taxId) },
        headerDiscount,
      );
      it.netAmount = toEuros(a.netCents);
      it.grossAmount = toEuros(a.grossCents);
      net += a.netCents;
      gross += a.grossCents;
    }
    for (const sc of shipping) {
      const a = shippingAmount({ unitPrice: sc.unitPrice ?? '0', taxValue: rate(sc.taxId) });
      Object.assign(sc, {
        netAmount: toEuros(a.netCents),
        grossAmount: toEuros(a.grossCents),
        netAmountInCompanyCurrency: toEuros(a.netCents),
        grossAmountInCompanyCurrency: toEuros(a.grossCents),
        unitPriceInCompanyCurrency: sc.unitPrice ?? '0',
      });
      net += a.netCents;
      gross += a.grossCents;
    }
    return { netAmount: toEuros(net), grossAmount: toEuros(gross) };
  }

  /** A decimal string with at most 5 places (weclapp's pattern), else 400. */
  private checkDecimal(value: unknown, field: string): string {
    if (typeof value !== 'string' || !/^\d{1,13}(\.\d{1,5})?$/.test(value)) throw new HttpError(400, `${field} must be a decimal string`);
    return value;
  }

  private checkTax(t: Tenant, value: unknown, field: string): string {
    if (typeof value !== 'string' || !t.data.tax.has(value)) throw new HttpError(400, `${field}: unknown tax`);
    return value;
  }

  private checkCurrency(t: Tenant, value: unknown): string {
    if (typeof value !== 'string' || !t.data.currency.has(value)) throw new HttpError(400, 'recordCurrencyId: unknown currency');
    return value;
  }

  /**
   * The tax weclapp picks for a position without `taxId` (its tax rules, simplified): the article's rate type
   * for deliveries into the EU (or without a delivery country), the zero-rate tax for exports.
   */
  private determineTax(t: Tenant, taxRateType: string | undefined, deliveryCountry: string | undefined): string {
    const value = deliveryCountry && !EU_COUNTRIES.has(deliveryCountry) ? '0' : (RATE_OF_TYPE[taxRateType ?? 'STANDARD'] ?? '19');
    return [...t.data.tax.values()].find((x) => x.taxType === 'VALUE_ADDED_TAX' && Number(x.taxValue) === Number(value))!.id;
  }

  /** Validates shipping cost positions (article, net `unitPrice`, `taxId` required). */
  private shippingCostItems(t: Tenant, raw: unknown): ShippingCostItem[] {
    if (!Array.isArray(raw)) throw new HttpError(400, 'shippingCostItems must be an array');
    return raw.map((r: unknown, i) => {
      const it = (r ?? {}) as Record<string, unknown>;
      const article = typeof it.articleId === 'string' ? t.data.article.get(it.articleId) : undefined;
      if (!article) throw new HttpError(400, `shippingCostItems[${i}]: articleId of an existing article is required`);
      const unitPrice = this.checkDecimal(it.unitPrice, `shippingCostItems[${i}].unitPrice`);
      const taxId = this.checkTax(t, it.taxId, `shippingCostItems[${i}].taxId`);
      return { id: t.nextId(), articleId: article.id, unitPrice, manualUnitPrice: it.manualUnitPrice === true, taxId, netAmount: '0.00', grossAmount: '0.00' };
    });
  }

  private address(raw: unknown, field: string): RecordAddress | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== 'object' || Array.isArray(raw)) throw new HttpError(400, `${field} must be an object`);
    return raw;
  }

  private createSalesOrder(t: Tenant, body: Record<string, unknown>): SimResponse {
    const customer = this.customerOf(t, body);
    if ('paid' in body) throw new HttpError(400, 'paid is read-only');
    // weclapp's limits (its description's maxLength): a longer value is refused with 400.
    if (typeof body.orderNumberAtCustomer === 'string' && body.orderNumberAtCustomer.length > 64)
      throw new HttpError(400, 'orderNumberAtCustomer: at most 64 characters');
    const deliveryAddress = this.address(body.deliveryAddress, 'deliveryAddress');
    const orderItems = this.items(t, body.orderItems ?? [], 'orderItems', [], deliveryAddress?.countryCode);
    const shippingCostItems = body.shippingCostItems === undefined ? undefined : this.shippingCostItems(t, body.shippingCostItems);
    const recordCurrencyId = body.recordCurrencyId === undefined ? undefined : this.checkCurrency(t, body.recordCurrencyId);
    const headerDiscount = body.headerDiscount === undefined ? undefined : this.checkDecimal(body.headerDiscount, 'headerDiscount');
    const status = body.status ?? 'ORDER_ENTRY_IN_PROGRESS';
    if (!SALES_ORDER_STATUSES.includes(status as SalesOrder['status'])) throw new HttpError(400, `status must be one of ${SALES_ORDER_STATUSES.join(', ')}`);
    const now = Date.now();
    const order: SalesOrder = {
      id: t.nextId(),
      version: '0',
      orderNumber: String(++t.orderSeq),
      customerId: customer.id,
      status: status as SalesOrder['status'],
      orderDate: typeof body.orderDate === 'number' ? body.orderDate : now,
      ...(typeof body.orderNumberAtCustomer === 'string' ? { orderNumberAtCustomer: body.orderNumberAtCustomer } : {}),
      ...(typeof body.commission === 'string' ? { commission: body.commission } : {}),
      deliveryAddress,
      invoiceAddress: this.address(body.invoiceAddress, 'invoiceAddress'),
      orderItems,
      ...(shippingCostItems ? { shippingCostItems } : {}),
      ...(recordCurrencyId ? { recordCurrencyId } : {}),
      ...(headerDiscount ? { headerDiscount } : {}),
      ...this.totals(t, orderItems, shippingCostItems, headerDiscount),
      paid: false,
      shipped: false,
      invoiced: false,
      customAttributes: body.customAttributes === undefined ? [] : this.checkCustomAttributes(t, body.customAttributes, 'salesOrder'),
      createdDate: now,
      lastModifiedDate: now,
    };
    t.data.salesOrder.set(order.id, order);
    this.notify(t, 'salesOrder', order.id, 'create');
    return { status: 201, json: toWire('salesOrder', order) };
  }

  private createQuotation(t: Tenant, body: Record<string, unknown>): SimResponse {
    const customer = this.customerOf(t, body);
    const quotationItems = this.items(t, body.quotationItems ?? [], 'quotationItems');
    const now = Date.now();
    const quotation: Quotation = {
      id: t.nextId(),
      version: '0',
      quotationNumber: String(++t.quotationSeq),
      customerId: customer.id,
      status: 'OPEN',
      quotationDate: now,
      ...(typeof body.commission === 'string' ? { commission: body.commission } : {}),
      quotationItems,
      ...this.totals(t, quotationItems),
      customAttributes: body.customAttributes === undefined ? [] : this.checkCustomAttributes(t, body.customAttributes, 'quotation'),
      createdDate: now,
      lastModifiedDate: now,
    };
    t.data.quotation.set(quotation.id, quotation);
    this.notify(t, 'quotation', quotation.id, 'create');
    return { status: 201, json: toWire('quotation', quotation) };
  }

  private invoiceSalesOrder(t: Tenant, order: SalesOrder): void {
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: TENANT_TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
    const invoiceDate = localMidnightMs(today);
    const customer = order.customerId ? t.data.customer.get(order.customerId) : undefined;
    const invoice: SalesInvoice = {
      id: t.nextId(),
      version: '0',
      invoiceNumber: `RE-${today.slice(0, 4)}-${String(++t.invoiceSeq).padStart(4, '0')}`,
      invoiceDate,
      customerId: order.customerId,
      customerNumber: customer?.customerNumber,
      salesOrderId: order.id,
      status: 'OPEN_ITEM_CREATED',
      salesInvoiceItems: (order.orderItems ?? []).map(({ manualUnitPrice: _m, ...it }) => ({ ...it, id: t.nextId() })),
      netAmount: order.netAmount,
      grossAmount: order.grossAmount,
      createdDate: Date.now(),
      lastModifiedDate: Date.now(),
    };
    t.data.salesInvoice.set(invoice.id, invoice);
  }

  // ───────────── control ─────────────

  private async control(req: SimRequest): Promise<SimResponse> {
    const tenant = req.query.get('tenant') ?? 'main';
    try {
      const t = this.tenantOrThrow(tenant);
      const route = `${req.method} ${req.path}`;
      if (route === 'GET /__control/state') return { status: 200, json: this.state() };
      if (route === 'POST /__control/reset') {
        this.reset();
        return { status: 200, json: { ok: true } };
      }
      const body = jsonObject(req.body);
      if (route === 'POST /__control/subscribe' || route === 'POST /__control/unsubscribe') {
        if (typeof body.url !== 'string' || !/^https?:\/\//.test(body.url)) throw new HttpError(400, 'url: an http(s) URL is required');
        if (route.endsWith('/subscribe')) t.subscriptions.add(body.url);
        else t.subscriptions.delete(body.url);
        return { status: 200, json: { subscriptions: [...t.subscriptions] } };
      }
      if (route === 'POST /__control/webhook') {
        const { url, entityName, entityId, type } = body;
        if (typeof url !== 'string' || typeof entityName !== 'string' || typeof entityId !== 'string' || typeof type !== 'string') {
          throw new HttpError(400, 'url, entityName, entityId and type (strings) are required');
        }
        return { status: 200, json: await this.deliverWebhook(url, { entityName, entityId, type }, tenant) };
      }
      const patch = /^PATCH \/__control\/(article|customer|salesOrder)\/([^/]+)$/.exec(route);
      if (patch) {
        return { status: 200, json: await this.patchEntity(patch[1] as 'article' | 'customer' | 'salesOrder', decodeURIComponent(patch[2]), body, tenant) };
      }
      throw new HttpError(404, `unknown control endpoint ${route}`);
    } catch (err) {
      if (err instanceof HttpError) return { status: err.status, json: errorBody(err.status, err.message) };
      throw err;
    }
  }

  /** Everything, for assertions: per tenant its entities (as arrays) and subscriptions; deliveries. */
  state(): Record<string, unknown> {
    const tenants: Record<string, unknown> = {};
    for (const [name, t] of this.tenants) {
      const entities: Record<string, unknown[]> = {};
      for (const [entity, map] of Object.entries(t.data)) entities[entity] = [...(map as Map<string, unknown>).values()];
      tenants[name] = { ...entities, subscriptions: [...t.subscriptions], baseUrl: this.baseUrl(name) };
    }
    return { tenants, deliveries: this.deliveries, contractViolations: this.contractViolations, attributeKeys: ATTRIBUTE_KEYS };
  }
}

/** Creates an ERP simulator (call `start()`; `stop()` in tests' afterAll). */
export function createErpSimulator(options: ErpSimulatorOptions = {}): ErpSimulator {
  return new ErpSimulator(options);
}

export type { Article, Customer, SalesOrder, Quotation, SalesInvoice };
