/**
 * Test support: the secrets a staging or production start of the ordering service requires (README "What
 * production changes"), freshly generated: Ed25519 keys for access tokens and license keys, a license secret,
 * an AES-256 key ring and a payment API key that is not the simulator's.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';

/** An Ed25519 private key in PKCS#8 PEM. */
function ed25519Pem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Environment variables of one deployment's secrets (the same object for every instance of that deployment). */
export function deploymentSecrets(): Record<string, string> {
  return {
    JWT_PRIVATE_KEY: ed25519Pem(),
    LICENSE_SIGNING_KEY: ed25519Pem(),
    LICENSE_SECRET_KEY: randomBytes(32).toString('base64url'),
    ENCRYPTION_KEYS: `1:${randomBytes(32).toString('base64')}`,
    PAYMENT_API_KEY: `payrexx-${randomBytes(12).toString('hex')}`,
  };
}
