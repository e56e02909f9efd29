/**
 * A tenant of the ERP simulator as its modules share it: options, live data, webhook subscriptions and number
 * sequences, and weclapp's error body.
 */
import type { ErpErrorBody, TenantData } from './types';

/** A tenant of the simulator. */
export interface ErpTenantOptions {
  /** `main` or `sandbox` (any word; used by `?tenant=`). */
  name: string;
  /** Path prefix before `/webapp/api/v1`, empty for none. */
  prefix: string;
  /** The tenant's `AuthenticationToken`. */
  token: string;
}

/** One tenant's state. */
export interface Tenant {
  options: ErpTenantOptions;
  data: TenantData;
  subscriptions: Set<string>;
  nextId: () => string;
  orderSeq: number;
  quotationSeq: number;
  invoiceSeq: number;
  /** Delivers the change to every subscribed webhook URL (in the background). */
  notify(entityName: string, entityId: string, type: 'create' | 'update'): void;
}

/** weclapp's error body (`type` ending in the problem kind, RFC 7807 fields and the older `error`). */
export function errorBody(
  status: number,
  message: string,
  kind = status === 401 ? 'unauthorized' : status === 404 ? 'not_found' : status === 409 ? 'optimistic_lock' : 'error',
): ErpErrorBody {
  return { type: `/webapp/view/api/errors.html#${kind}`, title: message, status, detail: message, error: message };
}
