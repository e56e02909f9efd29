/**
 * The one ERP client (docs/decisions.md §6 ERP): a weclapp-style REST v1 API per tenant (`ErpSystem` →
 * base URL from the configuration), header `AuthenticationToken` from `tokenProvider(system)` (the token
 * is stored encrypted elsewhere and never leaves this module: no error message, log line or result
 * contains it).
 *
 * Failure discipline:
 * - Every attempt has a deadline (`timeoutMs`, `AbortSignal.timeout`).
 * - Reads (GET) and optimistic updates (PUT with `version`: a repeat after success answers 409, never a
 *   second change) are retried on 5xx, timeouts and connection errors with exponential backoff and
 *   jitter; 4xx answers never are.
 * - Creations (POST salesOrder / quotation) are not idempotent in weclapp. They are made idempotent by a
 *   reference: the custom attribute `shopReference` (the caller's order number) is written on the
 *   document, looked up before the first POST, and looked up again before each retry after an ambiguous
 *   failure (timeout, dropped connection, 5xx). A document found by its reference is returned instead of
 *   creating another. Residual risk: a POST the ERP is still processing after our deadline plus backoff
 *   would be invisible to the lookup; the backoff between attempts (≥ the policy's base delay) and the
 *   caller's outbox (one transfer in flight per order) keep that window small, and the lookup on the next
 *   outbox attempt finds the document.
 * - Failures are {@link ErpError}s: HTTP status, entity, operation, and `retryable` (true for 5xx, 429,
 *   timeouts and connection errors — worth trying again later, e.g. from the outbox).
 */
import { DEFAULT_RETRY_POLICY, HttpTransportError, backoffDelayMs, fetchWithRetry, sleep, type HttpCall, type RetryPolicy } from '@sports-timing/shared';
import type { OrderingConfig } from '../config';
import {
  ERP_ATTRIBUTE_KEYS,
  type ErpArticle,
  type ErpArticleChanges,
  type ErpCustomAttribute,
  type ErpCustomAttributeDefinition,
  type ErpCustomer,
  type ErpPingResult,
  type ErpPropertyTranslation,
  type ErpQuotation,
  type ErpRecordItem,
  type ErpSalesInvoice,
  type ErpSalesOrder,
  type ErpSalesOrderChanges,
  type ErpSystem,
  type NewErpQuotation,
  type NewErpRecordItem,
  type NewErpSalesOrder,
} from './erp.types';

/**
 * A sales order to hand over: `order.orderItems` are the main positions; a set's sub items name their main
 * position by number, because weclapp links a sub item to its main item by the main item's id
 * (`parentItemId`), which exists only once the order does.
 */
export interface ErpSalesOrderDraft {
  order: NewErpSalesOrder;
  subItems: { parentPositionNumber: number; item: Omit<NewErpRecordItem, 'parentItemId'> }[];
}

/** Kind of an ERP failure. */
export type ErpErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'notFound'
  | 'conflict'
  | 'badRequest'
  | 'rateLimited'
  | 'server'
  | 'timeout'
  | 'network'
  | 'invalidResponse'
  | 'configuration';

/** A failed ERP call. The message names system, operation and status — never the token. */
export class ErpError extends Error {
  readonly system: ErpSystem;
  /** E.g. `PUT article/id/4711`. */
  readonly operation: string;
  /** weclapp entity name (`article`, `salesOrder` …). */
  readonly entity: string;
  /** HTTP status of the ERP's answer; null when none arrived. */
  readonly status: number | null;
  readonly code: ErpErrorCode;
  /** Worth repeating later (5xx, 429, timeout, connection). */
  readonly retryable: boolean;
  /** The ERP's own error text (trimmed, token-free), when it sent one. */
  readonly erpMessage: string | null;
  constructor(init: { system: ErpSystem; operation: string; entity: string; status: number | null; code: ErpErrorCode; erpMessage?: string | null; detail?: string }) {
    const what = init.status !== null ? `answered ${init.status}` : (init.detail ?? init.code);
    super(`ERP ${init.system}: ${init.operation} ${what}${init.erpMessage ? ` (${init.erpMessage})` : ''}`);
    this.name = 'ErpError';
    this.system = init.system;
    this.operation = init.operation;
    this.entity = init.entity;
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.code === 'server' || init.code === 'rateLimited' || init.code === 'timeout' || init.code === 'network';
    this.erpMessage = init.erpMessage ?? null;
  }
}

/** Construction options of {@link ErpClient}. */
export interface ErpClientOptions {
  /** Base URL per tenant, e.g. `https://acme.weclapp.com/webapp/api/v1`. */
  baseUrls: Record<ErpSystem, string>;
  /** The tenant's API token (decrypted on demand; rejected promise → `ErpError` code `configuration`). */
  tokenProvider: (system: ErpSystem) => Promise<string>;
  /** Deadline of one attempt in ms; default 10 000. */
  timeoutMs?: number;
  /** Retry schedule; default `DEFAULT_RETRY_POLICY` (4 attempts, 200 ms doubling, ≤ 5 s). */
  retry?: RetryPolicy;
  /** Page size of list reads (weclapp allows ≤ 1000); default 100. */
  pageSize?: number;
  /** Time zone of the tenant's document dates; default `Europe/Berlin`. */
  timeZone?: string;
  /** How long custom attribute definitions are cached, ms; default 5 minutes. */
  definitionsTtlMs?: number;
}

/** Filter of `listArticles`. */
export interface ErpArticleFilter {
  /** Only articles changed after this instant (epoch ms, exclusive). */
  modifiedAfter?: number;
  /** Only these article numbers. */
  articleNumbers?: string[];
}

/** Filter of `listCustomers`. */
export interface ErpCustomerFilter {
  modifiedAfter?: number;
  /** Only customers whose boolean custom attribute `retailer` is true. */
  retailersOnly?: boolean;
}

const MAX_PAGES = 10_000;

/** Offset of `timeZone` from UTC at `utcMs`, ms. */
function zoneOffsetMs(timeZone: string, utcMs: number): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(new Date(utcMs));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - Math.floor(utcMs / 1000) * 1000;
}

/** Epoch ms of local midnight starting day `day` of `month` (1–12) of `year` in `timeZone`. */
export function zonedMidnightMs(year: number, month: number, day: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day);
  const first = guess - zoneOffsetMs(timeZone, guess);
  return guess - zoneOffsetMs(timeZone, first);
}

/**
 * The value of the custom attribute `definition` on an entity: boolean (BOOLEAN), the selected value's
 * text (LIST), the string (STRING); null when the entity does not carry it.
 */
export function customAttributeValue(attributes: ErpCustomAttribute[] | undefined, definition: ErpCustomAttributeDefinition): boolean | string | null {
  const a = attributes?.find((x) => x.attributeDefinitionId === definition.id);
  if (!a) return null;
  if (definition.attributeType === 'BOOLEAN') return a.booleanValue ?? null;
  if (definition.attributeType === 'LIST') return definition.selectableValues?.find((v) => v.id === a.selectedValueId)?.value ?? null;
  return a.stringValue ?? null;
}

interface CallOptions {
  entity: string;
  /** Operation label for errors (path with ids, no query). */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  idempotent: boolean;
  /** Answer 404 with null instead of throwing. */
  nullOn404?: boolean;
  retry?: RetryPolicy;
}

/** The ERP client. One instance serves both tenants. */
export class ErpClient {
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;
  private readonly pageSize: number;
  private readonly timeZone: string;
  private readonly definitionsTtlMs: number;
  private readonly definitions = new Map<ErpSystem, { at: number; list: ErpCustomAttributeDefinition[] }>();

  constructor(private readonly options: ErpClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY;
    this.pageSize = options.pageSize ?? 100;
    this.timeZone = options.timeZone ?? 'Europe/Berlin';
    this.definitionsTtlMs = options.definitionsTtlMs ?? 5 * 60_000;
  }

  /** Base URL of a tenant (no token in it). */
  baseUrl(system: ErpSystem): string {
    return this.options.baseUrls[system].replace(/\/+$/, '');
  }

  private async token(system: ErpSystem, operation: string, entity: string): Promise<string> {
    try {
      const token = await this.options.tokenProvider(system);
      if (!token) throw new Error('empty');
      return token;
    } catch {
      throw new ErpError({ system, operation, entity, status: null, code: 'configuration', detail: 'has no usable API token configured' });
    }
  }

  private async call<T>(system: ErpSystem, method: HttpCall['method'], o: CallOptions): Promise<T | null> {
    const operation = `${method} ${o.path}`;
    const token = await this.token(system, operation, o.entity);
    const qs = o.query ? `?${new URLSearchParams(o.query).toString()}` : '';
    const headers: Record<string, string> = { AuthenticationToken: token, Accept: 'application/json' };
    if (o.body !== undefined) headers['Content-Type'] = 'application/json';
    let answer;
    try {
      answer = await fetchWithRetry({
        method,
        url: `${this.baseUrl(system)}/${o.path}${qs}`,
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
        timeoutMs: this.timeoutMs,
        idempotent: o.idempotent,
        retry: o.retry ?? this.retry,
      });
    } catch (err) {
      if (err instanceof HttpTransportError) {
        throw new ErpError({ system, operation, entity: o.entity, status: null, code: err.kind, detail: `${err.message} after ${err.attempts} attempt(s)` });
      }
      throw err;
    }
    if (answer.status === 404 && o.nullOn404) return null;
    if (answer.status >= 200 && answer.status < 300) {
      if (answer.text === '') return null;
      try {
        return JSON.parse(answer.text) as T;
      } catch {
        throw new ErpError({ system, operation, entity: o.entity, status: answer.status, code: 'invalidResponse', erpMessage: 'body is not JSON' });
      }
    }
    throw new ErpError({ system, operation, entity: o.entity, status: answer.status, code: codeOf(answer.status), erpMessage: erpMessageOf(answer.text, token) });
  }

  private async list<T>(system: ErpSystem, entity: string, filters: Record<string, string> = {}): Promise<T[]> {
    const all: T[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      // Sorted by id so that pages neither skip nor repeat rows while the ERP is being written to.
      const res = await this.call<{ result: T[] }>(system, 'GET', { entity, path: entity, query: { ...filters, sort: 'id', page: String(page), pageSize: String(this.pageSize) }, idempotent: true });
      const rows = res?.result ?? [];
      all.push(...rows);
      if (rows.length < this.pageSize) break;
    }
    return all;
  }

  /**
   * Cheap reachability and credentials check (`GET /article/count`, one attempt, no retry) for
   * `dev/test-erp-api` and the uptime status. Never throws.
   */
  async ping(system: ErpSystem): Promise<ErpPingResult> {
    const started = performance.now();
    const baseUrl = this.baseUrl(system);
    const done = (isReachable: boolean, httpStatus: number | null, message: string): ErpPingResult => ({ system, baseUrl, isReachable, httpStatus, latencyMs: Math.round(performance.now() - started), message });
    try {
      const res = await this.call<{ result: number }>(system, 'GET', { entity: 'article', path: 'article/count', idempotent: true, retry: { ...this.retry, maxAttempts: 1 } });
      return done(true, 200, `OK: ${res?.result ?? 0} articles`);
    } catch (err) {
      if (err instanceof ErpError) return done(false, err.status, err.message);
      throw err;
    }
  }

  /** Custom attribute definitions of a tenant (fresh read, all pages). */
  async listCustomAttributeDefinitions(system: ErpSystem): Promise<ErpCustomAttributeDefinition[]> {
    const list = await this.list<ErpCustomAttributeDefinition>(system, 'customAttributeDefinition');
    this.definitions.set(system, { at: Date.now(), list });
    return list;
  }

  /**
   * The definition with `attributeKey` (cached for `definitionsTtlMs`); `ErpError` code `configuration`
   * when the tenant has none (the ERP is not set up for the shop).
   */
  async attributeDefinition(system: ErpSystem, attributeKey: string): Promise<ErpCustomAttributeDefinition> {
    const cached = this.definitions.get(system);
    let list = cached && Date.now() - cached.at < this.definitionsTtlMs ? cached.list : undefined;
    if (!list?.some((d) => d.attributeKey === attributeKey)) list = await this.listCustomAttributeDefinitions(system);
    const def = list.find((d) => d.attributeKey === attributeKey);
    if (!def) throw new ErpError({ system, operation: 'GET customAttributeDefinition', entity: 'customAttributeDefinition', status: null, code: 'configuration', detail: `has no custom attribute "${attributeKey}"` });
    return def;
  }

  /** All articles (every page), optionally only changed ones or certain numbers. */
  async listArticles(system: ErpSystem, filter: ErpArticleFilter = {}): Promise<ErpArticle[]> {
    const q: Record<string, string> = {};
    if (filter.modifiedAfter !== undefined) q['lastModifiedDate-gt'] = String(filter.modifiedAfter);
    if (filter.articleNumbers) {
      if (filter.articleNumbers.length === 0) return [];
      q['articleNumber-in'] = JSON.stringify(filter.articleNumbers);
    }
    return this.list<ErpArticle>(system, 'article', q);
  }

  /** An article by ERP id; null when the ERP does not know it (e.g. deleted). */
  getArticle(system: ErpSystem, id: string): Promise<ErpArticle | null> {
    return this.call<ErpArticle>(system, 'GET', { entity: 'article', path: `article/id/${encodeURIComponent(id)}`, idempotent: true, nullOn404: true });
  }

  /** An article by article number; null when none. */
  async findArticleByNumber(system: ErpSystem, articleNumber: string): Promise<ErpArticle | null> {
    const res = await this.call<{ result: ErpArticle[] }>(system, 'GET', { entity: 'article', path: 'article', query: { 'articleNumber-eq': articleNumber }, idempotent: true });
    return res?.result[0] ?? null;
  }

  /**
   * Changes an article if it is still at `expectedVersion` (optimistic lock). A newer version in the
   * ERP → `ErpError` code `conflict` (status 409): re-read, re-apply, try again. Answers the new state.
   */
  async updateArticle(system: ErpSystem, id: string, changes: ErpArticleChanges, expectedVersion: string): Promise<ErpArticle> {
    const res = await this.call<ErpArticle>(system, 'PUT', {
      entity: 'article',
      path: `article/id/${encodeURIComponent(id)}`,
      query: { ignoreMissingProperties: 'true' },
      body: { ...changes, id, version: expectedVersion },
      idempotent: true,
    });
    return res!;
  }

  /** All parties in their customer role (every page; `/party`, as `/customer` is deprecated), optionally only retailers or changed ones. */
  async listCustomers(system: ErpSystem, filter: ErpCustomerFilter = {}): Promise<ErpCustomer[]> {
    const q: Record<string, string> = {};
    if (filter.modifiedAfter !== undefined) q['lastModifiedDate-gt'] = String(filter.modifiedAfter);
    if (filter.retailersOnly) q[`customAttribute${(await this.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.retailer)).id}-eq`] = 'true';
    return this.list<ErpCustomer>(system, 'party', { 'customer-eq': 'true', ...q });
  }

  private readonly customerIds = new Map<string, string>();

  /**
   * The id of the customer with `customerNumber` (cached: a customer number never moves to another customer);
   * `ErpError` code `configuration` when the tenant has none (e.g. the web-shop customer is not set up).
   */
  async customerIdByNumber(system: ErpSystem, customerNumber: string): Promise<string> {
    const key = `${system}\u0000${customerNumber}`;
    const cached = this.customerIds.get(key);
    if (cached) return cached;
    const res = await this.call<{ result: ErpCustomer[] }>(system, 'GET', { entity: 'party', path: 'party', query: { 'customerNumber-eq': customerNumber }, idempotent: true });
    const id = res?.result[0]?.id;
    if (!id) throw new ErpError({ system, operation: 'GET party', entity: 'party', status: null, code: 'configuration', detail: `has no customer ${customerNumber}` });
    this.customerIds.set(key, id);
    return id;
  }

  /**
   * An article's texts in other languages (`name`, `description` by locale, weclapp's property translations);
   * empty when there are none.
   */
  async articleTranslations(system: ErpSystem, articleId: string): Promise<ErpPropertyTranslation[]> {
    const res = await this.call<{ result: ErpPropertyTranslation[] }>(system, 'GET', {
      entity: 'propertyTranslation',
      path: 'propertyTranslation/readPropertyTranslations',
      query: { entityName: 'article', entityId: articleId },
      idempotent: true,
    });
    return res?.result ?? [];
  }

  /** A party (customer) by ERP id; null when unknown. */
  getCustomer(system: ErpSystem, id: string): Promise<ErpCustomer | null> {
    return this.call<ErpCustomer>(system, 'GET', { entity: 'party', path: `party/id/${encodeURIComponent(id)}`, idempotent: true, nullOn404: true });
  }

  private async findByReference<T>(system: ErpSystem, entity: 'salesOrder' | 'quotation', reference: string): Promise<T | null> {
    const def = await this.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopReference);
    const res = await this.call<{ result: T[] }>(system, 'GET', { entity, path: entity, query: { [`customAttribute${def.id}-eq`]: reference }, idempotent: true });
    return res?.result[0] ?? null;
  }

  /** The sales order created with `reference` (see `createSalesOrder`); null when none. */
  findSalesOrderByReference(system: ErpSystem, reference: string): Promise<ErpSalesOrder | null> {
    return this.findByReference<ErpSalesOrder>(system, 'salesOrder', reference);
  }

  /** The quotation created with `reference`; null when none. */
  findQuotationByReference(system: ErpSystem, reference: string): Promise<ErpQuotation | null> {
    return this.findByReference<ErpQuotation>(system, 'quotation', reference);
  }

  /** Idempotent creation by reference (see the module comment). */
  private async createOnce<T>(system: ErpSystem, entity: 'salesOrder' | 'quotation', body: { customAttributes?: ErpCustomAttribute[] }, reference: string): Promise<{ entity: T; created: boolean }> {
    const existing = await this.findByReference<T>(system, entity, reference);
    if (existing) return { entity: existing, created: false };
    const def = await this.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopReference);
    const withReference = { ...body, customAttributes: [...(body.customAttributes ?? []).filter((a) => a.attributeDefinitionId !== def.id), { attributeDefinitionId: def.id, stringValue: reference }] };
    const maxAttempts = Math.max(1, this.retry.maxAttempts);
    for (let attempt = 1; ; attempt++) {
      try {
        const created = await this.call<T>(system, 'POST', { entity, path: entity, body: withReference, idempotent: false });
        return { entity: created!, created: true };
      } catch (err) {
        if (!(err instanceof ErpError) || !err.retryable || attempt >= maxAttempts) throw err;
        await sleep(backoffDelayMs(this.retry, attempt));
        // The failed POST may have been carried out: its document is found by the reference.
        const found = await this.findByReference<T>(system, entity, reference);
        if (found) return { entity: found, created: true };
      }
    }
  }

  /**
   * Creates a sales order carrying `reference` (custom attribute `shopReference`; use the shop's order
   * number), at most once per reference: when one exists already it is returned with `created: false`.
   * Sub items follow in one optimistic update once the main items have ids; an order found by its reference
   * without them (an earlier attempt stopped in between) gets them then, never twice.
   */
  async createSalesOrder(system: ErpSystem, draft: ErpSalesOrderDraft, reference: string): Promise<{ salesOrder: ErpSalesOrder; created: boolean }> {
    const r = await this.createOnce<ErpSalesOrder>(system, 'salesOrder', draft.order, reference);
    const salesOrder = draft.subItems.length > 0 ? await this.attachSubItems(system, r.entity, draft.subItems) : r.entity;
    return { salesOrder, created: r.created };
  }

  /** Adds the sub items under their main items (matched by position number) unless the order has sub items already. */
  private async attachSubItems(system: ErpSystem, order: ErpSalesOrder, subItems: ErpSalesOrderDraft['subItems']): Promise<ErpSalesOrder> {
    let current = order;
    for (let attempt = 1; ; attempt++) {
      const items: ErpRecordItem[] = current.orderItems ?? [];
      if (items.some((it) => it.parentItemId !== undefined)) return current;
      const byPosition = new Map(items.map((it) => [it.positionNumber, it.id]));
      const added = subItems.map((s) => {
        const parentItemId = byPosition.get(s.parentPositionNumber);
        if (!parentItemId) throw new ErpError({ system, operation: `PUT salesOrder/id/${current.id}`, entity: 'salesOrder', status: null, code: 'invalidResponse', detail: `has no main item at position ${s.parentPositionNumber}` });
        return { ...s.item, parentItemId };
      });
      try {
        const res = await this.call<ErpSalesOrder>(system, 'PUT', {
          entity: 'salesOrder',
          path: `salesOrder/id/${encodeURIComponent(current.id)}`,
          query: { ignoreMissingProperties: 'true' },
          body: { id: current.id, version: current.version, orderItems: [...items.map((it) => ({ id: it.id })), ...added] },
          idempotent: true,
        });
        return res!;
      } catch (err) {
        // A newer version: someone (or our own earlier attempt) changed the order; look again.
        if (!(err instanceof ErpError) || err.code !== 'conflict' || attempt >= 3) throw err;
        const fresh = await this.getSalesOrder(system, current.id);
        if (!fresh) throw err;
        current = fresh;
      }
    }
  }

  /** A sales order by ERP id; null when unknown. */
  getSalesOrder(system: ErpSystem, id: string): Promise<ErpSalesOrder | null> {
    return this.call<ErpSalesOrder>(system, 'GET', { entity: 'salesOrder', path: `salesOrder/id/${encodeURIComponent(id)}`, idempotent: true, nullOn404: true });
  }

  /** Changes a sales order at `expectedVersion` (optimistic lock; 409 → `ErpError` code `conflict`). */
  async updateSalesOrder(system: ErpSystem, id: string, changes: ErpSalesOrderChanges, expectedVersion: string): Promise<ErpSalesOrder> {
    const res = await this.call<ErpSalesOrder>(system, 'PUT', {
      entity: 'salesOrder',
      path: `salesOrder/id/${encodeURIComponent(id)}`,
      query: { ignoreMissingProperties: 'true' },
      body: { ...changes, id, version: expectedVersion },
      idempotent: true,
    });
    return res!;
  }

  /** Creates a quotation carrying `reference`, at most once per reference (like `createSalesOrder`). */
  async createQuotation(system: ErpSystem, quotation: NewErpQuotation, reference: string): Promise<{ quotation: ErpQuotation; created: boolean }> {
    const r = await this.createOnce<ErpQuotation>(system, 'quotation', quotation, reference);
    return { quotation: r.entity, created: r.created };
  }

  /** A quotation by ERP id; null when unknown. */
  getQuotation(system: ErpSystem, id: string): Promise<ErpQuotation | null> {
    return this.call<ErpQuotation>(system, 'GET', { entity: 'quotation', path: `quotation/id/${encodeURIComponent(id)}`, idempotent: true, nullOn404: true });
  }

  /**
   * Sales invoices dated in `month` (1–12) of `year` in the tenant's time zone (Europe/Berlin: an
   * invoice of 1 March is in March although its timestamp is 28 February 23:00 UTC), by invoice date.
   */
  async listSalesInvoices(system: ErpSystem, year: number, month: number): Promise<ErpSalesInvoice[]> {
    const from = zonedMidnightMs(year, month, 1, this.timeZone);
    const to = month === 12 ? zonedMidnightMs(year + 1, 1, 1, this.timeZone) : zonedMidnightMs(year, month + 1, 1, this.timeZone);
    const rows = await this.list<ErpSalesInvoice>(system, 'salesInvoice', { 'invoiceDate-ge': String(from), 'invoiceDate-lt': String(to) });
    return rows.sort((a, b) => a.invoiceDate - b.invoiceDate || a.invoiceNumber.localeCompare(b.invoiceNumber));
  }
}

function codeOf(status: number): ErpErrorCode {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'notFound';
  if (status === 409) return 'conflict';
  if (status === 429) return 'rateLimited';
  if (status >= 500) return 'server';
  return 'badRequest';
}

/** The ERP's error text from a body (`detail`, `error` or `message`), ≤ 300 characters, token removed. */
function erpMessageOf(text: string, token: string): string | null {
  let msg: unknown;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    msg = body.detail ?? body.error ?? body.message ?? body.title;
  } catch {
    return null;
  }
  if (typeof msg !== 'string' || msg === '') return null;
  return msg.split(token).join('***').slice(0, 300);
}

/** The client for the configured tenants. */
export function createErpClient(
  config: Pick<OrderingConfig, 'erpBaseUrlWeclapp' | 'erpBaseUrlWeclappSandbox'>,
  tokenProvider: (system: ErpSystem) => Promise<string>,
  overrides: Omit<ErpClientOptions, 'baseUrls' | 'tokenProvider'> = {},
): ErpClient {
  return new ErpClient({ baseUrls: { weclapp: config.erpBaseUrlWeclapp, weclappSandbox: config.erpBaseUrlWeclappSandbox }, tokenProvider, ...overrides });
}
