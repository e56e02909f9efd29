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
import { ATTRIBUTE_KEYS, DEFAULT_TOKENS, attributeValue, seedTenant } from './seed';
import { QueryError } from './query';
import { SimHttpError, SimServer, jsonObject, type SimRequest, type SimResponse } from '@sports-timing/shared/src/sim-server';
import { postWebhook, withoutQuery } from '@sports-timing/shared/src/sim-webhook';
import { loadWeclappContract } from '@sports-timing/shared/src/weclapp-contract';
import { route, ship, update } from './records';
import { errorBody, type ErpTenantOptions, type Tenant } from './tenant';
import type { Article, CustomAttributeValue, Customer, EntityName, ErpTenantState, Quotation, SalesInvoice, SalesOrder, TenantData } from './types';

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

/** Answer of `PATCH /__control/{article|customer|salesOrder}/{id or number}`: the changed entity and the `update` webhook deliveries. @internal */
export interface ErpPatchAnswer<T extends Article | Customer | SalesOrder = Article | Customer | SalesOrder> {
  entity: T;
  deliveries: ErpWebhookDelivery[];
}

/** Answer of `GET /__control/state` ({@link ErpSimulator.state}): every tenant by name, all webhook deliveries, the attribute keys. @internal */
export interface ErpSimulatorState {
  tenants: Record<string, ErpTenantState>;
  deliveries: ErpWebhookDelivery[];
  contractViolations: ErpContractViolation[];
  attributeKeys: typeof ATTRIBUTE_KEYS;
}

const ENTITY_NUMBER_FIELD: Partial<Record<EntityName, string>> = {
  article: 'articleNumber',
  customer: 'customerNumber',
  salesOrder: 'orderNumber',
  quotation: 'quotationNumber',
  salesInvoice: 'invoiceNumber',
};

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
      port: options.port,
      host: options.host,
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
      const t: Tenant = {
        options,
        data: seedTenant(nextId, now),
        subscriptions: new Set(),
        nextId,
        orderSeq: 20000,
        quotationSeq: 30000,
        invoiceSeq: 100,
        notify: (entityName, entityId, type) => this.notify(t, entityName, entityId, type),
      };
      this.tenants.set(options.name, t);
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
      if (attributes === null || typeof attributes !== 'object') throw new SimHttpError(400, 'attributes must be an object');
      const current: CustomAttributeValue[] = [...(entity as unknown as { customAttributes: CustomAttributeValue[] }).customAttributes];
      for (const [key, value] of Object.entries(attributes)) {
        if (typeof value !== 'boolean' && typeof value !== 'string') throw new SimHttpError(400, `attributes.${key}: boolean or string expected`);
        let v: CustomAttributeValue;
        try {
          v = attributeValue(t.data.customAttributeDefinition.values(), key, value);
        } catch (err) {
          throw new SimHttpError(400, (err as Error).message);
        }
        const i = current.findIndex((c) => c.attributeDefinitionId === v.attributeDefinitionId);
        if (i >= 0) current[i] = v;
        else current.push(v);
      }
      merged.customAttributes = current;
    }
    let updated = update(t, entityName, entity.id, merged, { checkVersion: false, notify: false });
    // Booking a shipment (a warehouse process, not an API write): the order is `shipped` and gets its invoice.
    if (entityName === 'salesOrder' && fields.shipped === true) updated = ship(t, entity.id);
    const deliveries = await Promise.all(
      [...t.subscriptions].map((url) => this.deliverWebhook(url, { entityName, entityId: entity.id, type: 'update' }, tenant)),
    );
    return { entity: updated, deliveries };
  }

  private tenantOrThrow(name: string): Tenant {
    const t = this.tenants.get(name);
    if (!t) throw new SimHttpError(404, `unknown tenant ${name}`);
    return t;
  }

  private findByIdOrNumber(t: Tenant, entityName: EntityName, idOrNumber: string): { id: string } {
    const collection = t.data[entityName] as Map<string, { id: string }>;
    const byId = collection.get(idOrNumber);
    if (byId) return byId;
    const field = ENTITY_NUMBER_FIELD[entityName];
    const byNumber = field ? [...collection.values()].find((e) => (e as unknown as Record<string, unknown>)[field] === idOrNumber) : undefined;
    if (!byNumber) throw new SimHttpError(404, `${entityName} ${idOrNumber} not found`);
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
      answer = route(tenant, req, m[2].split('/'));
    } catch (err) {
      if (err instanceof SimHttpError) return { status: err.status, json: errorBody(err.status, err.message) };
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

  // ───────────── control ─────────────

  private async control(req: SimRequest): Promise<SimResponse> {
    const tenant = req.query.get('tenant') ?? 'main';
    const t = this.tenantOrThrow(tenant);
    const route = `${req.method} ${req.path}`;
    if (route === 'GET /__control/state') return { status: 200, json: this.state() };
    if (route === 'POST /__control/reset') {
      this.reset();
      return { status: 200, json: { ok: true } };
    }
    const body = jsonObject(req.body);
    if (route === 'POST /__control/subscribe' || route === 'POST /__control/unsubscribe') {
      if (typeof body.url !== 'string' || !/^https?:\/\//.test(body.url)) throw new SimHttpError(400, 'url: an http(s) URL is required');
      if (route.endsWith('/subscribe')) t.subscriptions.add(body.url);
      else t.subscriptions.delete(body.url);
      return { status: 200, json: { subscriptions: [...t.subscriptions] } };
    }
    if (route === 'POST /__control/webhook') {
      const { url, entityName, entityId, type } = body;
      if (typeof url !== 'string' || typeof entityName !== 'string' || typeof entityId !== 'string' || typeof type !== 'string') {
        throw new SimHttpError(400, 'url, entityName, entityId and type (strings) are required');
      }
      return { status: 200, json: await this.deliverWebhook(url, { entityName, entityId, type }, tenant) };
    }
    const patch = /^PATCH \/__control\/(article|customer|salesOrder)\/([^/]+)$/.exec(route);
    if (patch) {
      return { status: 200, json: await this.patchEntity(patch[1] as 'article' | 'customer' | 'salesOrder', decodeURIComponent(patch[2]), body, tenant) };
    }
    throw new SimHttpError(404, `unknown control endpoint ${route}`);
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

/** @internal */
export type { Article, Customer, SalesOrder, Quotation, SalesInvoice };
