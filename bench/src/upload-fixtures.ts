/**
 * The upload fixtures of the benchmark dataset: {@link UPLOAD_USERS} users with one deterministic API key each
 * and {@link UPLOAD_MODEMS_PER_USER} modems each, whose punches the upload scenarios write (dataset.ts creates
 * them and removes their punches after each round).
 */
import { createHash } from 'node:crypto';

/** Number of upload users (one key each) and modems per upload user. */
export const UPLOAD_USERS = 50;
export const UPLOAD_MODEMS_PER_USER = 4;

/** Serial prefix of modems written by the upload scenarios (dataset.ts `cleanUploads` removes their punches). */
export const UPLOAD_MODEM_PREFIX = 'UP-';

/** Deterministic API key of upload user `i` (1-based): `tk_` + 43 base64url characters, like generated keys. */
export function uploadKey(i: number): string {
  return `tk_${createHash('sha256').update(`sports-timing-bench-upload-key-${i}`).digest('base64url')}`;
}

/** Serial of modem `m` (1-based) of upload user `u` (1-based). */
export function uploadModem(u: number, m: number): string {
  return `${UPLOAD_MODEM_PREFIX}${String(u).padStart(2, '0')}-${m}`;
}
