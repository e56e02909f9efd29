/**
 * Offline verification of a license key, as the licensed product does it with the published public key
 * (`LicensePublicKey`): the tests check the keys the service signs with it.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { LicenseKeyPayload } from '../../src/identity/license-keys';

/**
 * Verifies a license key offline with the public key (SPKI PEM or KeyObject): returns its payload, or null
 * when the key is malformed or the signature does not match (any changed byte).
 */
export function verifyLicenseKey(key: string, publicKey: string | KeyObject): LicenseKeyPayload | null {
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(key);
  if (!m) return null;
  const bytes = Buffer.from(m[1], 'base64url');
  const signature = Buffer.from(m[2], 'base64url');
  // base64url decoding ignores trailing bits: insist on the canonical text so no two keys verify alike.
  if (bytes.toString('base64url') !== m[1] || signature.toString('base64url') !== m[2]) return null;
  const pub = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  if (!verify(null, bytes, pub, signature)) return null;
  try {
    return JSON.parse(bytes.toString('utf8')) as LicenseKeyPayload;
  } catch {
    return null;
  }
}
