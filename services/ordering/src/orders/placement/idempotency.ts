/**
 * `Idempotency-Key` support of order creation (ordering spec parameter `IdempotencyKey`): caller scopes,
 * canonical request hashes and the key record taken inside the order transaction.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ApiError, GrpcCode } from '@sports-timing/shared';
import type { Principal } from '../../auth/principal';
import type { DB } from '../../db/schema';
import * as repo from './idempotency.repository';

/** How long a key and its response are kept. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a retry waits for the first request with its key before answering 409. */
export const IDEMPOTENCY_WAIT_MS = 10_000;
/** Expired records deleted by each request that takes a new key (keeps the table bounded without a job). */
const PURGE_PER_ORDER = 20;

/** The caller part of a key's scope: `user:<id>`, `client:<id>` or `anonymous`. */
export function callerOf(principal: Principal | null): string {
  return principal ? `${principal.kind}:${principal.id}` : 'anonymous';
}

/** JSON with object keys sorted at every level, so equal bodies hash equally whatever the key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 (hex) of the canonical JSON of a request body. */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/** An idempotency key of one request: scope (operation + caller), key and body hash. */
export interface IdempotencyClaim {
  scope: string;
  key: string;
  requestHash: string;
}

function isLockTimeout(err: unknown): boolean {
  return (err as { code?: unknown })?.code === '55P03';
}

/**
 * Takes `claim` inside the order transaction `trx`. Returns null when this request holds the key now
 * (the caller stores its response with `insertOutboxAndCompleteKey` before committing), or the stored
 * response of the first request with the same key and body. Throws ApiError 422 when the key was used
 * with another body. A first request still in flight is waited for up to `waitMs`; PostgreSQL then
 * raises a lock timeout, which aborts `trx` and which {@link translateIdempotencyError} turns into 409.
 */
export async function takeIdempotencyKey(trx: Kysely<DB>, claim: IdempotencyClaim, waitMs: number): Promise<unknown> {
  const existing = await repo.takeIdempotencyKey(trx, { ...claim, expiresAt: new Date(Date.now() + IDEMPOTENCY_TTL_MS), waitMs, purgeLimit: PURGE_PER_ORDER });
  if (!existing) return null;
  if (existing.request_hash !== claim.requestHash) {
    throw new ApiError(422, 'This Idempotency-Key was already used with a different request body.', { grpcCode: GrpcCode.INVALID_ARGUMENT });
  }
  return existing.response_body;
}

/** Maps the lock timeout of a key wait (see {@link takeIdempotencyKey}) to 409; other errors pass. */
export function translateIdempotencyError(err: unknown): unknown {
  if (isLockTimeout(err)) return new ApiError(409, 'A request with this Idempotency-Key is still in progress; retry later.', { grpcCode: GrpcCode.ABORTED });
  return err;
}
