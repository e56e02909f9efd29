/**
 * The one ERP client (docs/decisions.md §6 ERP): a weclapp-style REST v1 API per tenant (`ErpSystem` →
 * base URL from the configuration), header `AuthenticationToken` from `tokenProvider(system)` (the token
 * is stored encrypted elsewhere and never leaves this module: no error message, log line or result
 * contains it).
 *
 * Failure discipline (docs/weclapp.md "Load management and exactly one sales order"):
 * - Every attempt has a deadline (`timeoutMs`, default 60 s: weclapp queues a request for up to about 30 s
 *   under load and asks clients for a timeout of at least 60 s).
 * - Reads (GET) and optimistic updates (PUT with `version`: a repeat after success answers 409, never a
 *   second change) are retried on 5xx, timeouts and connection errors with exponential backoff and
 *   jitter, and on 429 after `Retry-After` (when sent, ≤ 60 s) or the backoff; other 4xx answers never are.
 * - Creations (POST salesOrder / quotation) are not idempotent in weclapp. They are made idempotent by a
 *   reference: the custom attribute `shopReference` (the caller's order number) is written on the
 *   document and looked up (and checked: weclapp ignores filters it does not know) before any POST. A sales
 *   order is POSTed once per call and only after the caller's `guard` granted it; after an unanswered POST the
 *   caller waits for the document to appear instead of POSTing again (see `createSalesOrder`).
 * - Failures are {@link ErpError}s: HTTP status, entity, operation, weclapp's problem type, and `retryable`
 *   (true for 5xx, 429, timeouts and connection errors — worth trying again later, e.g. from the outbox).
 */
import { DEFAULT_RETRY_POLICY, HttpTransportError, backoffDelayMs, fetchWithRetry, sleep, type HttpCall, type RetryPolicy } from '@sports-timing/shared';
import type { OrderingConfig } from '../config';
import {
  ERP_ATTRIBUTE_KEYS,
  type ErpArticle,
  type ErpArticleChanges,
  type ErpCustomAttribute,
  type ErpCustomAttributeDefinition,
  type ErpCurrency,
  type ErpCustomer,
  type ErpPingResult,
  type ErpPropertyTranslation,
  type ErpQuotation,
  type ErpRecordItem,
  type ErpSalesInvoice,
  type ErpSalesOrder,
  type ErpSalesOrderChanges,
  type ErpSystem,
  type ErpTax,
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

/**
 * Cross-instance permission for the one POST of a sales order (see `ErpClient.createSalesOrder`): `claim`
 * answers whether this caller may POST now; `release` gives the permission back after a definite refusal.
 */
export interface CreateGuard {
  claim(): Promise<boolean>;
  release(): Promise<void>;
}

/** No guard: every call may POST (for callers that never repeat a failed creation on their own). */
const UNGUARDED: CreateGuard = { claim: () => Promise.resolve(true), release: () => Promise.resolve() };

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
  | 'configuration'
  /** A creation may still be under way (an earlier POST went unanswered): look for its document again later. */
  | 'createPending';

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
  /**
   * weclapp's problem type (the last segment of the answer's `type`), e.g. `optimistic_lock`, `persistence`,
   * `request_timeout`; null when the answer had none.
   */
  readonly problemType: string | null;
  /** The wait the ERP asked for (`Retry-After`), ms; null when none. */
  readonly retryAfterMs: number | null;
  constructor(init: {
    system: ErpSystem;
    operation: string;
    entity: string;
    status: number | null;
    code: ErpErrorCode;
    erpMessage?: string | null;
    detail?: string;
    problemType?: string | null;
    retryAfterMs?: number | null;
  }) {
    const what = init.status !== null ? `answered ${init.status}` : (init.detail ?? init.code);
    super(`ERP ${init.system}: ${init.operation} ${what}${init.erpMessage ? ` (${init.erpMessage})` : ''}`);
    this.name = 'ErpError';
    this.system = init.system;
    this.operation = init.operation;
    this.entity = init.entity;
    this.status = init.status;
    this.code = init.code;
    this.retryable =
      init.code === 'server' || init.code === 'rateLimited' || init.code === 'timeout' || init.code === 'network' || init.code === 'createPending';
    this.erpMessage = init.erpMessage ?? null;
    this.problemType = init.problemType ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }

  /** A 409 of weclapp's optimistic lock (a newer `version`), as opposed to its other 409 problems (context, persistence). */
  get isOptimisticLock(): boolean {
    return this.status === 409 && (this.problemType === null || this.problemType === 'optimistic_lock');
  }
}

/** Construction options of {@link ErpClient}. */
export interface ErpClientOptions {
  /** Base URL per tenant, e.g. `https://acme.weclapp.com/webapp/api/v1`. */
  baseUrls: Record<ErpSystem, string>;
  /** The tenant's API token (decrypted on demand; rejected promise → `ErpError` code `configuration`). */
  tokenProvider: (system: ErpSystem) => Promise<string>;
  /** Deadline of one attempt in ms; default 60 000 (weclapp's guide: at least 60 s). */
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
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMs));
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
    this.timeoutMs = options.timeoutMs ?? 60_000;
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
    const retry = o.retry ?? this.retry;
    let answer;
    for (let attempt = 1; ; attempt++) {
      try {
        answer = await fetchWithRetry({
          method,
          url: `${this.baseUrl(system)}/${o.path}${qs}`,
          headers,
          body: o.body === undefined ? undefined : JSON.stringify(o.body),
          timeoutMs: this.timeoutMs,
          idempotent: o.idempotent,
          retry,
        });
      } catch (err) {
        if (err instanceof HttpTransportError) {
          throw new ErpError({ system, operation, entity: o.entity, status: null, code: err.kind, detail: `${err.message} after ${err.attempts} attempt(s)` });
        }
        throw err;
      }
      // 429: weclapp rejected a request that stayed queued too long (it was not carried out). Reads and
      // versioned updates wait (Retry-After when sent, else the backoff) and try again; creations are the caller's.
      if (answer.status !== 429 || !o.idempotent || attempt >= Math.max(1, retry.maxAttempts)) break;
      await sleep(retryAfterMsOf(answer.headers) ?? backoffDelayMs(retry, attempt));
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
    throw new ErpError({
      system,
      operation,
      entity: o.entity,
      status: answer.status,
      code: codeOf(answer.status),
      erpMessage: erpMessageOf(answer.text, token),
      problemType: problemTypeOf(answer.text),
      retryAfterMs: retryAfterMsOf(answer.headers),
    });
  }

  private async list<T>(system: ErpSystem, entity: string, filters: Record<string, string> = {}): Promise<T[]> {
    const all: T[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      // Sorted by id so that pages neither skip nor repeat rows while the ERP is being written to.
      const res = await this.call<{ result: T[] }>(system, 'GET', {
        entity,
        path: entity,
        query: { ...filters, sort: 'id', page: String(page), pageSize: String(this.pageSize) },
        idempotent: true,
      });
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
    const done = (isReachable: boolean, httpStatus: number | null, message: string): ErpPingResult => ({
      system,
      baseUrl,
      isReachable,
      httpStatus,
      latencyMs: Math.round(performance.now() - started),
      message,
    });
    try {
      const res = await this.call<{ result: number }>(system, 'GET', {
        entity: 'article',
        path: 'article/count',
        idempotent: true,
        retry: { ...this.retry, maxAttempts: 1 },
      });
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
    if (!def)
      throw new ErpError({
        system,
        operation: 'GET customAttributeDefinition',
        entity: 'customAttributeDefinition',
        status: null,
        code: 'configuration',
        detail: `has no custom attribute "${attributeKey}"`,
      });
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
    const res = await this.call<{ result: ErpArticle[] }>(system, 'GET', {
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
    const res = await this.call<{ result: ErpCustomer[] }>(system, 'GET', {
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

  /**
   * The document carrying `reference` in `shopReference`. Each answered row is checked for the reference:
   * weclapp silently ignores a filter it does not know, which would otherwise make any document "the" match.
   */
  private async findByReference<T extends { customAttributes?: ErpCustomAttribute[] }>(
    system: ErpSystem,
    entity: 'salesOrder' | 'quotation',
    reference: string,
  ): Promise<T | null> {
    const def = await this.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopReference);
    const res = await this.call<{ result: T[] }>(system, 'GET', {
      entity,
      path: entity,
      query: { [`customAttribute${def.id}-eq`]: reference, sort: 'id' },
      idempotent: true,
    });
    return res?.result.find((row) => customAttributeValue(row.customAttributes, def) === reference) ?? null;
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
  private async createOnce<T extends { customAttributes?: ErpCustomAttribute[] }>(
    system: ErpSystem,
    entity: 'salesOrder' | 'quotation',
    body: { customAttributes?: ErpCustomAttribute[] },
    reference: string,
  ): Promise<{ entity: T; created: boolean }> {
    const existing = await this.findByReference<T>(system, entity, reference);
    if (existing) return { entity: existing, created: false };
    const def = await this.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopReference);
    const withReference = {
      ...body,
      customAttributes: [
        ...(body.customAttributes ?? []).filter((a) => a.attributeDefinitionId !== def.id),
        { attributeDefinitionId: def.id, stringValue: reference },
      ],
    };
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
   * Before the one POST, `guard.claim()` must grant it (the caller records, across its instances, that a
   * creation is under way; false → `ErpError` code `createPending`). A POST that got a definite answer
   * other than success (4xx, 429: weclapp did not carry it out) calls `guard.release()`; one that got no
   * answer or a 5xx keeps the claim, so no one POSTs again until the caller's claim has aged past weclapp's
   * queue and processing time — meanwhile the document, if the POST is carried out late, is found by its
   * reference. Without `guard` every call may POST: only for callers that do not repeat a failed creation
   * within that time. Sub items follow in one optimistic update once the main items have ids; an order found by its
   * reference without them (an earlier attempt stopped in between) gets them then, never twice.
   */
  async createSalesOrder(
    system: ErpSystem,
    draft: ErpSalesOrderDraft,
    reference: string,
    guard: CreateGuard = UNGUARDED,
  ): Promise<{ salesOrder: ErpSalesOrder; created: boolean }> {
    let found = await this.findByReference<ErpSalesOrder>(system, 'salesOrder', reference);
    let created = false;
    if (!found) {
      if (!(await guard.claim())) {
        throw new ErpError({
          system,
          operation: 'POST salesOrder',
          entity: 'salesOrder',
          status: null,
          code: 'createPending',
          detail: `may still be creating the sales order of ${reference}; looking again later`,
        });
      }
      const def = await this.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopReference);
      const body = {
        ...draft.order,
        customAttributes: [
          ...(draft.order.customAttributes ?? []).filter((a) => a.attributeDefinitionId !== def.id),
          { attributeDefinitionId: def.id, stringValue: reference },
        ],
      };
      try {
        found = (await this.call<ErpSalesOrder>(system, 'POST', { entity: 'salesOrder', path: 'salesOrder', body, idempotent: false }))!;
        created = true;
      } catch (err) {
        if (err instanceof ErpError && err.status !== null && err.status < 500) await guard.release();
        throw err;
      }
    }
    const salesOrder = draft.subItems.length > 0 ? await this.attachSubItems(system, found, draft.subItems) : found;
    return { salesOrder, created };
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
    const res = await this.call<{ result: ErpCurrency[] }>(system, 'GET', {
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
    const res = await this.call<{ result: ErpTax[] }>(system, 'GET', {
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

  /** Adds the sub items under their main items (matched by position number) unless the order has sub items already. */
  private async attachSubItems(system: ErpSystem, order: ErpSalesOrder, subItems: ErpSalesOrderDraft['subItems']): Promise<ErpSalesOrder> {
    let current = order;
    for (let attempt = 1; ; attempt++) {
      const items: ErpRecordItem[] = current.orderItems ?? [];
      if (items.some((it) => it.parentItemId !== undefined)) return current;
      const byPosition = new Map(items.map((it) => [it.positionNumber, it.id]));
      const added = subItems.map((s) => {
        const parentItemId = byPosition.get(s.parentPositionNumber);
        if (!parentItemId)
          throw new ErpError({
            system,
            operation: `PUT salesOrder/id/${current.id}`,
            entity: 'salesOrder',
            status: null,
            code: 'invalidResponse',
            detail: `has no main item at position ${s.parentPositionNumber}`,
          });
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
        if (!(err instanceof ErpError) || !err.isOptimisticLock || attempt >= 3) throw err;
        const fresh = await this.getSalesOrder(system, current.id);
        if (!fresh) throw err;
        current = fresh;
      }
    }
  }

  /**
   * Sales orders changed after `modifiedAfter` (epoch ms, exclusive; weclapp's `lastModifiedDate-gt`), every page,
   * by id: the periodic check that moves orders to shipped/completed when webhooks are silent.
   */
  listSalesOrdersModifiedAfter(system: ErpSystem, modifiedAfter: number): Promise<ErpSalesOrder[]> {
    return this.list<ErpSalesOrder>(system, 'salesOrder', { 'lastModifiedDate-gt': String(modifiedAfter) });
  }

  /** A sales order by ERP id; null when unknown. */
  getSalesOrder(system: ErpSystem, id: string): Promise<ErpSalesOrder | null> {
    return this.call<ErpSalesOrder>(system, 'GET', {
      entity: 'salesOrder',
      path: `salesOrder/id/${encodeURIComponent(id)}`,
      idempotent: true,
      nullOn404: true,
    });
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

/** The wait an answer asks for in `Retry-After` (seconds), ms, at most 60 s; null when absent or not seconds. */
function retryAfterMsOf(headers: Headers): number | null {
  const v = headers.get('retry-after');
  if (!v || !/^\d{1,6}$/.test(v)) return null;
  return Math.min(60_000, Number(v) * 1000);
}

/** weclapp's problem type: the last segment of an RFC 7807 body's `type` (`…/optimistic_lock`, `…#persistence`). */
function problemTypeOf(text: string): string | null {
  try {
    const type = (JSON.parse(text) as { type?: unknown }).type;
    if (typeof type !== 'string' || type === '') return null;
    return type.split(/[/#]/).pop() || null;
  } catch {
    return null;
  }
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
