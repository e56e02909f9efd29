/**
 * Small helpers for the identity area's random secrets (refresh tokens, client secrets and identifiers,
 * license secrets): 256-bit random values as base64url text, stored as SHA-256 lower-case hex.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new 256-bit random secret as base64url (43 characters), optionally with a readable prefix. */
export function randomSecret(prefix = ''): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 of the UTF-8 text, lower-case hex (64 characters). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function hexDigestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** Whether a PostgreSQL error is a unique violation (23505), optionally of the named constraint/index. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}
