/**
 * The one ERP client (docs/decisions.md §6 ERP): a weclapp-style REST v1 API per tenant (`ErpSystem` →
 * base URL from the configuration), header `AuthenticationToken` from `tokenProvider(system)` (the token
 * is stored encrypted elsewhere and never leaves `erp-transport.ts`: no error message, log line or result
 * contains it).
 *
 * Failure discipline (docs/weclapp.md "Load management and exactly one sales order"), built on the
 * third-party kit of `@sports-timing/shared` (`provider-kit.ts`, `http-client.ts`):
 * - Every attempt has a deadline (`timeoutMs`, default 60 s: weclapp queues a request for up to about 30 s
 *   under load and asks clients for a timeout of at least 60 s).
 * - Reads (GET) and optimistic updates (PUT with `version`: a repeat after success answers 409, never a
 *   second change) are retried on 5xx, timeouts and connection errors with exponential backoff and
 *   jitter, and on 429 after `Retry-After` (when sent, ≤ 60 s) or the backoff; other 4xx answers never are
 *   (`erp-transport.ts`).
 * - Creations (POST salesOrder / quotation) are not idempotent in weclapp. They are made idempotent by a
 *   reference (`erp-documents.ts`): the custom attribute `shopReference` (the caller's order number) is written on the
 *   document and looked up (and checked: weclapp ignores filters it does not know) before any POST. A sales
 *   order is POSTed once per call and only after the caller's `guard` granted it; after an unanswered POST the
 *   caller waits for the document to appear instead of POSTing again (see `createSalesOrder`).
 * - Failures are {@link ErpError}s (`erp-error.ts`): HTTP status, entity, operation, weclapp's problem type, and `retryable`
 *   (true for 5xx, 429, timeouts and connection errors — worth trying again later, e.g. from the outbox).
 */
import { zonedMidnightMs } from '@sports-timing/shared';
import type { OrderingConfig } from '../config';
import { UNGUARDED, createOnce, createSalesOrder, findByReference, getSalesOrder, type CreateGuard, type ErpSalesOrderDraft } from './erp-documents';
import { ErpError } from './erp-error';
import { ErpTransport, type ErpClientOptions } from './erp-transport';
import {
  ERP_ATTRIBUTE_KEYS,
  type ErpArticle,
  type ErpArticleChanges,
  type ErpCustomAttributeDefinition,
  type ErpCurrency,
  type ErpCustomer,
  type ErpPingResult,
  type ErpPropertyTranslation,
  type ErpQuotation,
  type ErpSalesInvoice,
  type ErpSalesOrder,
  type ErpSalesOrderChanges,
  type ErpSystem,
  type ErpTax,
  type NewErpQuotation,
} from './erp.types';

// The client's interface in one import: its error, options, draft and guard types and value helpers.
export { ErpError } from './erp-error';
export type { CreateGuard, ErpSalesOrderDraft } from './erp-documents';
export type { ErpClientOptions } from './erp-transport';
export { customAttributeValue } from './erp-values';

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

/** The ERP client. One instance serves both tenants. */
export class ErpClient {
  private readonly api: ErpTransport;
  private readonly timeZone: string;

  constructor(options: ErpClientOptions) {
    this.api = new ErpTransport(options);
    this.timeZone = options.timeZone ?? 'Europe/Berlin';
  }

  /** Base URL of a tenant (no token in it). */
  baseUrl(system: ErpSystem): string {
    return this.api.baseUrl(system);
  }

  /**
   * Cheap reachability and credentials check (`GET /article/count`, one attempt, no retry) for
   * `dev/test-erp-api` and the uptime status. Never throws.
   */
  ping(system: ErpSystem): Promise<ErpPingResult> {
    return this.api.ping(system);
  }

  /** Custom attribute definitions of a tenant (fresh read, all pages). */
  listCustomAttributeDefinitions(system: ErpSystem): Promise<ErpCustomAttributeDefinition[]> {
    return this.api.listCustomAttributeDefinitions(system);
  }

  /**
   * The definition with `attributeKey` (cached for `definitionsTtlMs`); `ErpError` code `configuration`
   * when the tenant has none (the ERP is not set up for the shop).
   */
  attributeDefinition(system: ErpSystem, attributeKey: string): Promise<ErpCustomAttributeDefinition> {
    return this.api.attributeDefinition(system, attributeKey);
  }

  /** All articles (every page), optionally only changed ones or certain numbers. */
  async listArticles(system: ErpSystem, filter: ErpArticleFilter = {}): Promise<ErpArticle[]> {
    const q: Record<string, string> = {};
    if (filter.modifiedAfter !== undefined) q['lastModifiedDate-gt'] = String(filter.modifiedAfter);
    if (filter.articleNumbers) {
      if (filter.articleNumbers.length === 0) return [];
      q['articleNumber-in'] = JSON.stringify(filter.articleNumbers);
    }
    return this.api.list<ErpArticle>(system, 'article', q);
  }

  /** An article by ERP id; null when the ERP does not know it (e.g. deleted). */
  getArticle(system: ErpSystem, id: string): Promise<ErpArticle | null> {
    return this.api.call<ErpArticle>(system, 'GET', { entity: 'article', path: `article/id/${encodeURIComponent(id)}`, idempotent: true, nullOn404: true });
  }

  /** An article by article number; null when none. */
  async findArticleByNumber(system: ErpSystem, articleNumber: string): Promise<ErpArticle | null> {
    const res = await this.api.call<{ result: ErpArticle[] }>(system, 'GET', {
      entity: 'article',
      path: 'article',
      query: { 'articleNumber-eq': articleNumber },
      idempotent: true,
    });
    return res?.result[0] ?? null;
  }

  /**
   * Changes an article if it is still at `expectedVersion` (optimistic lock). A newer version in the
   * ERP → `ErpError` code `conflict` (status 409): re-read, re-apply, try again. Answers the new state.
   */
  async updateArticle(system: ErpSystem, id: string, changes: ErpArticleChanges, expectedVersion: string): Promise<ErpArticle> {
    const res = await this.api.call<ErpArticle>(system, 'PUT', {
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
    if (filter.retailersOnly) q[`customAttribute${(await this.api.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.retailer)).id}-eq`] = 'true';
    return this.api.list<ErpCustomer>(system, 'party', { 'customer-eq': 'true', ...q });
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
    const res = await this.api.call<{ result: ErpCustomer[] }>(system, 'GET', {
      entity: 'party',
      path: 'party',
      query: { 'customerNumber-eq': customerNumber },
      idempotent: true,
    });
    const id = res?.result[0]?.id;
    if (!id)
      throw new ErpError({ system, operation: 'GET party', entity: 'party', status: null, code: 'configuration', detail: `has no customer ${customerNumber}` });
    this.customerIds.set(key, id);
    return id;
  }

  /**
   * An article's texts in other languages (`name`, `description` by locale, weclapp's property translations);
   * empty when there are none.
   */
  async articleTranslations(system: ErpSystem, articleId: string): Promise<ErpPropertyTranslation[]> {
    const res = await this.api.call<{ result: ErpPropertyTranslation[] }>(system, 'GET', {
      entity: 'propertyTranslation',
      path: 'propertyTranslation/readPropertyTranslations',
      query: { entityName: 'article', entityId: articleId },
      idempotent: true,
    });
    return res?.result ?? [];
  }

  /** A party (customer) by ERP id; null when unknown. */
  getCustomer(system: ErpSystem, id: string): Promise<ErpCustomer | null> {
    return this.api.call<ErpCustomer>(system, 'GET', { entity: 'party', path: `party/id/${encodeURIComponent(id)}`, idempotent: true, nullOn404: true });
  }

  /** The sales order created with `reference` (see `createSalesOrder`); null when none. */
  findSalesOrderByReference(system: ErpSystem, reference: string): Promise<ErpSalesOrder | null> {
    return findByReference<ErpSalesOrder>(this.api, system, 'salesOrder', reference);
  }

  /** The quotation created with `reference`; null when none. */
  findQuotationByReference(system: ErpSystem, reference: string): Promise<ErpQuotation | null> {
    return findByReference<ErpQuotation>(this.api, system, 'quotation', reference);
  }

  /** Creates a sales order carrying `reference`, at most once per reference (`erp-documents.ts` `createSalesOrder`). */
  createSalesOrder(
    system: ErpSystem,
    draft: ErpSalesOrderDraft,
    reference: string,
    guard: CreateGuard = UNGUARDED,
  ): Promise<{ salesOrder: ErpSalesOrder; created: boolean }> {
    return createSalesOrder(this.api, system, draft, reference, guard);
  }

  private readonly currencyIds = new Map<string, string>();

  /**
   * The `/currency` id of ISO 4217 `code` (weclapp's currency `name`), looked up once per process and tenant;
   * `ErpError` code `configuration` when the tenant has no such currency.
   */
  async currencyIdByCode(system: ErpSystem, code: string): Promise<string> {
    const key = `${system}\u0000${code}`;
    const cached = this.currencyIds.get(key);
    if (cached) return cached;
    const res = await this.api.call<{ result: ErpCurrency[] }>(system, 'GET', {
      entity: 'currency',
      path: 'currency',
      query: { 'name-eq': code },
      idempotent: true,
    });
    const id = res?.result.find((c) => c.name === code)?.id;
    if (!id)
      throw new ErpError({ system, operation: 'GET currency', entity: 'currency', status: null, code: 'configuration', detail: `has no currency ${code}` });
    this.currencyIds.set(key, id);
    return id;
  }

  private readonly taxIds = new Map<string, string>();

  /**
   * The `/tax` id of the sales VAT (`taxType` VALUE_ADDED_TAX) with rate `ratePercent`, looked up once per process
   * and tenant (the lowest id when several match); `ErpError` code `configuration` when there is none.
   */
  async salesTaxIdByRate(system: ErpSystem, ratePercent: number): Promise<string> {
    const key = `${system}\u0000${ratePercent}`;
    const cached = this.taxIds.get(key);
    if (cached) return cached;
    const res = await this.api.call<{ result: ErpTax[] }>(system, 'GET', {
      entity: 'tax',
      path: 'tax',
      query: { 'taxType-eq': 'VALUE_ADDED_TAX', sort: 'id' },
      idempotent: true,
    });
    const id = res?.result.find((t) => t.taxType === 'VALUE_ADDED_TAX' && Number(t.taxValue) === ratePercent)?.id;
    if (!id)
      throw new ErpError({ system, operation: 'GET tax', entity: 'tax', status: null, code: 'configuration', detail: `has no sales tax of ${ratePercent} %` });
    this.taxIds.set(key, id);
    return id;
  }

  /**
   * Sales orders changed after `modifiedAfter` (epoch ms, exclusive; weclapp's `lastModifiedDate-gt`), every page,
   * by id: the periodic check that moves orders to shipped/completed when webhooks are silent.
   */
  listSalesOrdersModifiedAfter(system: ErpSystem, modifiedAfter: number): Promise<ErpSalesOrder[]> {
    return this.api.list<ErpSalesOrder>(system, 'salesOrder', { 'lastModifiedDate-gt': String(modifiedAfter) });
  }

  /** A sales order by ERP id; null when unknown. */
  getSalesOrder(system: ErpSystem, id: string): Promise<ErpSalesOrder | null> {
    return getSalesOrder(this.api, system, id);
  }

  /** Changes a sales order at `expectedVersion` (optimistic lock; 409 → `ErpError` code `conflict`). */
  async updateSalesOrder(system: ErpSystem, id: string, changes: ErpSalesOrderChanges, expectedVersion: string): Promise<ErpSalesOrder> {
    const res = await this.api.call<ErpSalesOrder>(system, 'PUT', {
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
    const r = await createOnce<ErpQuotation>(this.api, system, 'quotation', quotation, reference);
    return { quotation: r.entity, created: r.created };
  }

  /** A quotation by ERP id; null when unknown. */
  getQuotation(system: ErpSystem, id: string): Promise<ErpQuotation | null> {
    return this.api.call<ErpQuotation>(system, 'GET', {
      entity: 'quotation',
      path: `quotation/id/${encodeURIComponent(id)}`,
      idempotent: true,
      nullOn404: true,
    });
  }

  /**
   * Sales invoices dated in `month` (1–12) of `year` in the tenant's time zone (Europe/Berlin: an
   * invoice of 1 March is in March although its timestamp is 28 February 23:00 UTC), by invoice date.
   */
  async listSalesInvoices(system: ErpSystem, year: number, month: number): Promise<ErpSalesInvoice[]> {
    const from = zonedMidnightMs(year, month, 1, this.timeZone);
    const to = month === 12 ? zonedMidnightMs(year + 1, 1, 1, this.timeZone) : zonedMidnightMs(year, month + 1, 1, this.timeZone);
    const rows = await this.api.list<ErpSalesInvoice>(system, 'salesInvoice', { 'invoiceDate-ge': String(from), 'invoiceDate-lt': String(to) });
    return rows.sort((a, b) => a.invoiceDate - b.invoiceDate || a.invoiceNumber.localeCompare(b.invoiceNumber));
  }
}

/** The client for the configured tenants. */
export function createErpClient(
  config: Pick<OrderingConfig, 'erpBaseUrlWeclapp' | 'erpBaseUrlWeclappSandbox'>,
  tokenProvider: (system: ErpSystem) => Promise<string>,
  overrides: Omit<ErpClientOptions, 'baseUrls' | 'tokenProvider'> = {},
): ErpClient {
  return new ErpClient({ baseUrls: { weclapp: config.erpBaseUrlWeclapp, weclappSandbox: config.erpBaseUrlWeclappSandbox }, tokenProvider, ...overrides });
}
