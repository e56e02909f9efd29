/**
 * API key material. A key is `tk_` + 32 random bytes in base64url (43 characters): 256 bits of entropy,
 * so a plain SHA-256 is a sufficient one-way hash (no salt or slow KDF needed) and makes the hash itself
 * the lookup key. The `tk_` prefix lets secret scanners and people recognise a timing key.
 */
import { createHash, randomBytes } from 'node:crypto';

/** Recognisable prefix of generated keys. */
const KEY_PREFIX = 'tk_';

/**
 * The key format a configured key (`TIMING_BOOTSTRAP_API_KEY`) must have: the prefix and at least 43
 * base64url characters, as {@link generateApiKey} makes them (a hand-typed word is no key).
 */
export const KEY_FORMAT = /^tk_[A-Za-z0-9_-]{43,250}$/;

/** Shown when a configured key is not in {@link KEY_FORMAT}. */
export const KEY_FORMAT_TEXT =
  "a timing API key: \"tk_\" and at least 43 base64url characters (A-Z a-z 0-9 - _), e.g. from: node -e \"console.log('tk_' + require('crypto').randomBytes(32).toString('base64url'))\"";

/** Keys longer than this are rejected without a lookup (generated ones have 46 characters). */
const MAX_KEY_LENGTH = 256;

/** A new random API key (46 characters). */
export function generateApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 of the key's UTF-8 bytes (32 bytes), as stored in `api_keys.key_hash`. */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/**
 * The hash to look a presented key up by, or undefined for text that cannot be a key (longer than
 * {@link MAX_KEY_LENGTH}): the service's half of the key rules, applied by every path that authenticates a key
 * (`authenticateKey`). The database's half, which keys are active and whose they are, is
 * the SQL function `active_key_owner` (timing migration 0008).
 */
export function keyLookupHash(key: string): Buffer | undefined {
  return key.length <= MAX_KEY_LENGTH ? hashApiKey(key) : undefined;
}

/** The part of a key shown in listings (first 10 characters; 7 random characters for generated keys). */
export function keyDisplayPrefix(key: string): string {
  return key.slice(0, 10);
}
