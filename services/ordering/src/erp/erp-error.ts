/**
 * The ERP client's failure (docs/weclapp.md "Load management and exactly one sales order"): the kit's
 * {@link ProviderError} (status classification, `retryable`) with weclapp's own facts — tenant, entity, problem
 * type and the wait it asked for — and the readers of weclapp's error bodies.
 */
import { ProviderError, type ProviderErrorCode } from '@sports-timing/shared';
import type { ErpSystem } from './erp.types';

/** Kind of an ERP failure: the kit's HTTP classification plus the ERP's own two. */
export type ErpErrorCode =
  | ProviderErrorCode
  | 'configuration'
  /** A creation may still be under way (an earlier POST went unanswered): look for its document again later. */
  | 'createPending';

/** A failed ERP call. The message names system, operation and status — never the token. */
export class ErpError extends ProviderError<ErpErrorCode> {
  readonly system: ErpSystem;
  /** weclapp entity name (`article`, `salesOrder` …). */
  readonly entity: string;
  /**
   * weclapp's problem type (the last segment of the answer's `type`), e.g. `optimistic_lock`, `persistence`,
   * `request_timeout`; null when the answer had none.
   */
  readonly problemType: string | null;
  /** The wait the ERP asked for (`Retry-After`), ms; null when none. */
  readonly retryAfterMs: number | null;
  constructor(init: {
    system: ErpSystem;
    /** E.g. `PUT article/id/4711`. */
    operation: string;
    entity: string;
    status: number | null;
    code: ErpErrorCode;
    /** The ERP's own error text (trimmed, token-free): the kit's `providerMessage`. */
    erpMessage?: string | null;
    detail?: string;
    problemType?: string | null;
    retryAfterMs?: number | null;
  }) {
    super({
      provider: `ERP ${init.system}`,
      operation: init.operation,
      status: init.status,
      code: init.code,
      providerMessage: init.erpMessage,
      detail: init.detail,
      // A pending creation is worth looking at again later, like any failure the kit calls retryable.
      retryable: init.code === 'createPending' ? true : undefined,
    });
    this.name = 'ErpError';
    this.system = init.system;
    this.entity = init.entity;
    this.problemType = init.problemType ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }

  /** A 409 of weclapp's optimistic lock (a newer `version`), as opposed to its other 409 problems (context, persistence). */
  get isOptimisticLock(): boolean {
    return this.status === 409 && (this.problemType === null || this.problemType === 'optimistic_lock');
  }
}

/** weclapp's problem type: the last segment of an RFC 7807 body's `type` (`…/optimistic_lock`, `…#persistence`). */
export function problemTypeOf(text: string): string | null {
  try {
    const type = (JSON.parse(text) as { type?: unknown }).type;
    if (typeof type !== 'string' || type === '') return null;
    return type.split(/[/#]/).pop() || null;
  } catch {
    return null;
  }
}

/** The ERP's error text from a body (`detail`, `error` or `message`), ≤ 300 characters, token removed. */
export function erpMessageOf(text: string, token: string): string | null {
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
