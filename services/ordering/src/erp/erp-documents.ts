/**
 * Documents created at most once (docs/weclapp.md "Load management and exactly one sales order"): weclapp's
 * POSTs of sales orders and quotations are not idempotent, so each carries a reference (the custom attribute
 * `shopReference`, the caller's order number) that is looked up — and checked: weclapp ignores filters it does
 * not know — before any POST. A sales order is POSTed once per call and only after the caller's guard granted
 * it; after an unanswered POST the caller waits for the document to appear instead of POSTing again.
 */
import { withRetry } from '@sports-timing/shared';
import { ErpError } from './erp-error';
import type { ErpTransport } from './erp-transport';
import { customAttributeValue } from './erp-values';
import {
  ERP_ATTRIBUTE_KEYS,
  type ErpCustomAttribute,
  type ErpCustomAttributeDefinition,
  type ErpRecordItem,
  type ErpSalesOrder,
  type ErpSystem,
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
 * Cross-instance permission for the one POST of a sales order (see {@link createSalesOrder}): `claim`
 * answers whether this caller may POST now; `release` gives the permission back after a definite refusal.
 */
export interface CreateGuard {
  claim(): Promise<boolean>;
  release(): Promise<void>;
}

/** No guard: every call may POST (for callers that never repeat a failed creation on their own). */
export const UNGUARDED: CreateGuard = { claim: () => Promise.resolve(true), release: () => Promise.resolve() };

type Referenced = { customAttributes?: ErpCustomAttribute[] };

/** `body` with `reference` as its only `shopReference` value. */
function withReference<B extends Referenced>(body: B, def: ErpCustomAttributeDefinition, reference: string): B {
  return {
    ...body,
    customAttributes: [
      ...(body.customAttributes ?? []).filter((a) => a.attributeDefinitionId !== def.id),
      { attributeDefinitionId: def.id, stringValue: reference },
    ],
  };
}

/**
 * The document carrying `reference` in `shopReference`; null when none. Each answered row is checked for the
 * reference: weclapp silently ignores a filter it does not know, which would otherwise make any document "the" match.
 */
export async function findByReference<T extends Referenced>(
  api: ErpTransport,
  system: ErpSystem,
  entity: 'salesOrder' | 'quotation',
  reference: string,
): Promise<T | null> {
  const def = await api.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopReference);
  const res = await api.call<{ result: T[] }>(system, 'GET', {
    entity,
    path: entity,
    query: { [`customAttribute${def.id}-eq`]: reference, sort: 'id' },
    idempotent: true,
  });
  return res?.result.find((row) => customAttributeValue(row.customAttributes, def) === reference) ?? null;
}

/**
 * Creates a document carrying `reference` unless one exists (then `created: false`). A retryable failure of
 * the POST is retried on the client's schedule, after looking the document up again: the failed POST may
 * have been carried out. Throws {@link ErpError}.
 */
export async function createOnce<T extends Referenced>(
  api: ErpTransport,
  system: ErpSystem,
  entity: 'salesOrder' | 'quotation',
  body: Referenced,
  reference: string,
): Promise<{ entity: T; created: boolean }> {
  const existing = await findByReference<T>(api, system, entity, reference);
  if (existing) return { entity: existing, created: false };
  const def = await api.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopReference);
  // Only a failed POST is retried; a failed look-up ends the creation as before.
  let posting = false;
  return withRetry(
    api.retry,
    async (n) => {
      posting = false;
      if (n > 1) {
        const found = await findByReference<T>(api, system, entity, reference);
        if (found) return { entity: found, created: true };
      }
      posting = true;
      const created = await api.call<T>(system, 'POST', { entity, path: entity, body: withReference(body, def, reference), idempotent: false });
      return { entity: created!, created: true };
    },
    (outcome) => posting && !outcome.ok && outcome.error instanceof ErpError && outcome.error.retryable,
  );
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
export async function createSalesOrder(
  api: ErpTransport,
  system: ErpSystem,
  draft: ErpSalesOrderDraft,
  reference: string,
  guard: CreateGuard,
): Promise<{ salesOrder: ErpSalesOrder; created: boolean }> {
  let found = await findByReference<ErpSalesOrder>(api, system, 'salesOrder', reference);
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
    const def = await api.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.shopReference);
    try {
      const body = withReference(draft.order, def, reference);
      found = (await api.call<ErpSalesOrder>(system, 'POST', { entity: 'salesOrder', path: 'salesOrder', body, idempotent: false }))!;
      created = true;
    } catch (err) {
      if (err instanceof ErpError && err.status !== null && err.status < 500) await guard.release();
      throw err;
    }
  }
  const salesOrder = draft.subItems.length > 0 ? await attachSubItems(api, system, found, draft.subItems) : found;
  return { salesOrder, created };
}

/** A sales order by ERP id; null when unknown. */
export function getSalesOrder(api: ErpTransport, system: ErpSystem, id: string): Promise<ErpSalesOrder | null> {
  return api.call<ErpSalesOrder>(system, 'GET', { entity: 'salesOrder', path: `salesOrder/id/${encodeURIComponent(id)}`, idempotent: true, nullOn404: true });
}

/** Adds the sub items under their main items (matched by position number) unless the order has sub items already. */
async function attachSubItems(api: ErpTransport, system: ErpSystem, order: ErpSalesOrder, subItems: ErpSalesOrderDraft['subItems']): Promise<ErpSalesOrder> {
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
      const res = await api.call<ErpSalesOrder>(system, 'PUT', {
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
      const fresh = await getSalesOrder(api, system, current.id);
      if (!fresh) throw err;
      current = fresh;
    }
  }
}
