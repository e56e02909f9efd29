/**
 * License keys (`requestLicenseKey`, `LicenseInformation.key`): `base64url(payload).base64url(signature)`,
 * the payload the UTF-8 JSON `{v, licenseId, product, email, secretHash, issuedAt}` and the signature
 * Ed25519 over exactly those payload bytes, so licensed software verifies a key offline with the public
 * key published at `GET /api/rest/v1/licensing/public-key`.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import type { components } from '../generated/openapi';

/** What a license key states. */
export interface LicenseKeyPayload {
  /** Format version (1). */
  v: 1;
  licenseId: string;
  product: string;
  email: string;
  /** SHA-256 hex of the license secret (as listed by `secret-hashes`). */
  secretHash: string;
  /** RFC 3339 UTC. */
  issuedAt: string;
}

/** `LicensePublicKey` of the spec. */
export type LicensePublicKeyDto = components['schemas']['LicensePublicKey'];

/** A new Ed25519 private key as PKCS#8 PEM (development key and tests). */
export function generateLicenseSigningKeyPem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Signs license keys. */
export class LicenseSigner {
  private readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;

  /** Throws when the key is not an Ed25519 PKCS#8 PEM. */
  constructor(privateKeyPem: string) {
    this.privateKey = createPrivateKey(privateKeyPem);
    if (this.privateKey.asymmetricKeyType !== 'ed25519') throw new Error('LICENSE_SIGNING_KEY must be an Ed25519 key (PKCS#8 PEM)');
    this.publicKey = createPublicKey(this.privateKey);
  }

  /** The signed key text of a payload. */
  sign(payload: LicenseKeyPayload): string {
    const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
    const signature = sign(null, bytes, this.privateKey);
    return `${bytes.toString('base64url')}.${signature.toString('base64url')}`;
  }

  /** The public key as the spec's `LicensePublicKey`. */
  async publicKeyDto(): Promise<LicensePublicKeyDto> {
    const jwk = await exportJWK(this.publicKey);
    return {
      algorithm: 'Ed25519',
      publicKeyPem: this.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      jwk: { kty: String(jwk.kty), crv: String(jwk.crv), x: String(jwk.x), kid: await calculateJwkThumbprint(jwk) },
    };
  }
}
