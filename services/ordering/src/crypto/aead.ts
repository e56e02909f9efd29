/**
 * AES-256-GCM envelope encryption with key versions (docs/decisions.md §6: stored ERP API tokens; operations
 * `devEncrypt`, `devDecrypt`).
 *
 * Ciphertext layout (then URL-safe base64 without padding, RFC 4648 §5):
 *
 *     keyVersion (1 byte, 1–255) ‖ nonce (12 random bytes) ‖ ciphertext (= plaintext length) ‖ tag (16 bytes)
 *
 * - The key ring holds every configured key (`ENCRYPTION_KEYS=1:<base64 32 bytes>,2:<…>`); the highest
 *   version encrypts, every configured version decrypts, so keys rotate by adding a version, re-encrypting
 *   stored values at leisure ({@link EnvelopeEncryption.needsReencryption}) and later dropping the old key.
 * - Callers bind a ciphertext to its context with `aad` (e.g. `erp-api-token:weclapp`): the same bytes
 *   presented in another context (a row swapped with another) fail authentication. The key-version byte
 *   is authenticated as well, so it cannot be rewritten to select another key.
 * - The tag is always 16 bytes (`authTagLength: 16`): a truncated tag is rejected, never accepted as a
 *   shorter (weaker) GCM tag.
 * - Nonces are random; with 96-bit random nonces one key stays within NIST SP 800-38D's bound for 2^32
 *   encryptions, far beyond this service's use (tokens and utilities), and rotation resets the count.
 *
 * Every failure to decrypt (malformed text, unknown version, wrong key, wrong AAD, tampering) is one
 * {@link DecryptionError} without detail, so a caller learns nothing about which check failed.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1;
/** Smallest valid ciphertext: header, nonce and tag around an empty plaintext. */
const MIN_BYTES = HEADER_BYTES + NONCE_BYTES + TAG_BYTES;

/** Any failure to decrypt; deliberately carries no reason (no oracle for attackers). */
export class DecryptionError extends Error {
  constructor() {
    super('The ciphertext could not be decrypted.');
    this.name = 'DecryptionError';
  }
}

/** A configuration problem of the key ring (bad `ENCRYPTION_KEYS`). @internal */
export class EncryptionKeyError extends Error {
  constructor(message: string) {
    super(`Invalid ENCRYPTION_KEYS: ${message}`);
    this.name = 'EncryptionKeyError';
  }
}

/** Key version (1–255) → 32-byte AES key. */
export type KeyRing = ReadonlyMap<number, Buffer>;

/**
 * Parses `ENCRYPTION_KEYS`: comma-separated `<version>:<key>` with version 1–255 and the key as 32 bytes in
 * base64 or base64url. Throws {@link EncryptionKeyError} (naming the version, never the key) on bad input.
 * @internal
 */
export function parseKeyRing(spec: string): KeyRing {
  const ring = new Map<number, Buffer>();
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^(\d{1,3}):([A-Za-z0-9+/_-]+={0,2})$/.exec(part);
    if (!m) throw new EncryptionKeyError('each entry must be <version>:<base64 key>');
    const version = Number(m[1]);
    if (version < 1 || version > 255) throw new EncryptionKeyError(`key version ${m[1]} is outside 1–255`);
    if (ring.has(version)) throw new EncryptionKeyError(`key version ${version} is given twice`);
    const key = Buffer.from(m[2].replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length !== KEY_BYTES) throw new EncryptionKeyError(`key version ${version} must be ${KEY_BYTES} bytes (base64)`);
    ring.set(version, key);
  }
  if (ring.size === 0) throw new EncryptionKeyError('no key given');
  return ring;
}

/** A fresh `ENCRYPTION_KEYS` value with one random key of version 1 (development secrets, tests). */
export function generateKeyRingSpec(version = 1): string {
  return `${version}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

function fromBase64Url(text: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(text)) return null;
  return Buffer.from(text, 'base64url');
}

/** Encrypts and decrypts UTF-8 texts under a {@link KeyRing}; see the file header for the format. */
export class EnvelopeEncryption {
  /** Version that encrypts: the highest configured. */
  readonly currentVersion: number;

  constructor(private readonly ring: KeyRing) {
    if (ring.size === 0) throw new EncryptionKeyError('no key given');
    this.currentVersion = Math.max(...ring.keys());
  }

  /** From an `ENCRYPTION_KEYS` value. */
  static fromSpec(spec: string): EnvelopeEncryption {
    return new EnvelopeEncryption(parseKeyRing(spec));
  }

  /** The configured key versions, ascending. */
  get versions(): number[] {
    return [...this.ring.keys()].sort((a, b) => a - b);
  }

  /** Encrypts `plaintext` (UTF-8) bound to `aad` (context string, not secret) under the current key. */
  encrypt(plaintext: string, aad: string): string {
    const header = Buffer.from([this.currentVersion]);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.ring.get(this.currentVersion)!, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.concat([header, Buffer.from(aad, 'utf8')]));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([header, nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** Decrypts the output of {@link encrypt} for the same `aad`; throws {@link DecryptionError} on any failure. */
  decrypt(ciphertext: string, aad: string): string {
    const raw = fromBase64Url(ciphertext);
    if (!raw || raw.length < MIN_BYTES) throw new DecryptionError();
    const key = this.ring.get(raw[0]);
    if (!key) throw new DecryptionError();
    const nonce = raw.subarray(HEADER_BYTES, HEADER_BYTES + NONCE_BYTES);
    const tag = raw.subarray(raw.length - TAG_BYTES);
    const body = raw.subarray(HEADER_BYTES + NONCE_BYTES, raw.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.concat([raw.subarray(0, HEADER_BYTES), Buffer.from(aad, 'utf8')]));
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([decipher.update(body), decipher.final()]);
      return new TextDecoder('utf-8', { fatal: true }).decode(plain);
    } catch {
      throw new DecryptionError();
    }
  }

  /** Key version of a ciphertext, or null when it is not one; does not authenticate. */
  keyVersionOf(ciphertext: string): number | null {
    const raw = fromBase64Url(ciphertext);
    return raw && raw.length >= MIN_BYTES ? raw[0] : null;
  }

  /** Whether a stored ciphertext was made with an older key and should be re-encrypted (key rotation). */
  needsReencryption(ciphertext: string): boolean {
    const v = this.keyVersionOf(ciphertext);
    return v !== null && v !== this.currentVersion;
  }
}
