/**
 * The ERP client's transport (docs/weclapp.md "Load management and exactly one sales order"): one weclapp
 * REST v1 call with the tenant's token, the kit's retries (`@sports-timing/shared`: `fetchWithRetry`, and
 * `withRetry` for a 429 on reads and versioned updates after `Retry-After` when sent, ≤ 60 s), answers mapped to
 * {@link ErpError}s; paged list reads; the cached custom attribute definitions every document write needs.
 * The token never leaves this module: no error message, log line or result contains it.
 */
import {
  DEFAULT_RETRY_POLICY,
  HttpTransportError,
  fetchWithRetry,
  providerCodeOf,
  retryAfterMs,
  withRetry,
  type HttpCall,
  type RetryPolicy,
} from '@sports-timing/shared';
import { ErpError, erpMessageOf, problemTypeOf } from './erp-error';
import type { ErpCustomAttributeDefinition, ErpPingResult, ErpSystem } from './erp.types';

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

/** One call of {@link ErpTransport.call}. */
export interface ErpCallOptions {
  /** weclapp entity name, for errors. */
  entity: string;
  /** Path below the base URL, also the operation label of errors (ids, no query). */
  path: string;
  query?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** GET, and PUT with a `version` (a repeat after success answers 409, never a second change). */
  idempotent: boolean;
  /** Answer 404 with null instead of throwing. */
  nullOn404?: boolean;
  retry?: RetryPolicy;
}

const MAX_PAGES = 10_000;

/** Longest `Retry-After` of a 429 that is waited out, ms (weclapp's queue holds a request for about 30 s). */
const MAX_RETRY_AFTER_MS = 60_000;

/** The wait a 429 asks for, ms, at most {@link MAX_RETRY_AFTER_MS}; null when it asks for none. */
function cappedRetryAfterMs(headers: Headers): number | null {
  const asked = retryAfterMs(headers);
  return asked === null ? null : Math.min(MAX_RETRY_AFTER_MS, asked);
}

/** Calls of one ERP client (both tenants). */
export class ErpTransport {
  private readonly timeoutMs: number;
  /** The client's retry schedule (also of its own retries around creations). */
  readonly retry: RetryPolicy;
  private readonly pageSize: number;
  private readonly definitionsTtlMs: number;
  private readonly definitions = new Map<ErpSystem, { at: number; list: ErpCustomAttributeDefinition[] }>();

  constructor(private readonly options: ErpClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY;
    this.pageSize = options.pageSize ?? 100;
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

  /**
   * One ERP call: the parsed 2xx body (null when empty, or for a 404 with `nullOn404`); any other answer, no
   * answer or a body that is not JSON throws an {@link ErpError}.
   */
  async call<T>(system: ErpSystem, method: HttpCall['method'], o: ErpCallOptions): Promise<T | null> {
    const operation = `${method} ${o.path}`;
    const token = await this.token(system, operation, o.entity);
    const qs = o.query ? `?${new URLSearchParams(o.query).toString()}` : '';
    const headers: Record<string, string> = { AuthenticationToken: token, Accept: 'application/json' };
    if (o.body !== undefined) headers['Content-Type'] = 'application/json';
    const retry = o.retry ?? this.retry;
    const answer = await withRetry(
      retry,
      async () => {
        try {
          return await fetchWithRetry({
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
            throw new ErpError({
              system,
              operation,
              entity: o.entity,
              status: null,
              code: err.kind,
              detail: `${err.message} after ${err.attempts} attempt(s)`,
            });
          }
          throw err;
        }
      },
      // 429: weclapp rejected a request that stayed queued too long (it was not carried out). Reads and
      // versioned updates wait (Retry-After when sent, else the backoff) and try again; creations are the caller's.
      (outcome) => outcome.ok && outcome.value.status === 429 && o.idempotent && (cappedRetryAfterMs(outcome.value.headers) ?? true),
    );
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
      code: providerCodeOf(answer.status),
      erpMessage: erpMessageOf(answer.text, token),
      problemType: problemTypeOf(answer.text),
      retryAfterMs: cappedRetryAfterMs(answer.headers),
    });
  }

  /** Every row of an entity's list (all pages, by id), with weclapp's `filters`. */
  async list<T>(system: ErpSystem, entity: string, filters: Record<string, string> = {}): Promise<T[]> {
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
}
