/**
 * Checks of the key and address variables of the ordering service that `envReader` cannot type (README
 * "Configuration"): each must stop the start with one line naming its variable — never the key itself —
 * instead of a decoder error at start or a failure at first use.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { ConfigError } from '@sports-timing/shared';
import { EnvelopeEncryption } from './crypto/aead';
import { passwordProblem } from './identity/passwords';

/** The key variables as read from the environment (undefined = unset: generated in development). */
interface SecretValues {
  jwtPrivateKeyPem: string | undefined;
  jwtPreviousPublicKeysPem: string | undefined;
  licenseSigningKeyPem: string | undefined;
  licenseSecretKey: string | undefined;
  encryptionKeys: string | undefined;
  mailFrom: string;
  bootstrapAdminPassword: string | undefined;
}

/** An Ed25519 private key in PKCS#8 PEM, or a ConfigError naming `name`. */
function ed25519PrivateKey(name: string, pem: string | undefined): void {
  if (pem === undefined) return;
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    type = undefined;
  }
  if (type !== 'ed25519') throw new ConfigError(name, '***', 'an Ed25519 private key in PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)');
}

/** A sender such as `shop@example.com` or `Shop <shop@example.com>` (what nodemailer's `from` takes). */
const SENDER = /^(?:[^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

/**
 * Throws a {@link ConfigError} naming the first unusable variable: `JWT_PRIVATE_KEY`, `LICENSE_SIGNING_KEY`
 * (Ed25519 PKCS#8 PEM), `JWT_PREVIOUS_PUBLIC_KEYS` (one or more SPKI PEM blocks), `LICENSE_SECRET_KEY` (≥ 32
 * characters), `ENCRYPTION_KEYS` (crypto/aead.ts key ring), `BOOTSTRAP_ADMIN_PASSWORD` (the password policy,
 * identity/passwords.ts) and `MAIL_FROM` (an e-mail address, optionally with a name).
 */
export function checkOrderingSecrets(v: SecretValues): void {
  ed25519PrivateKey('JWT_PRIVATE_KEY', v.jwtPrivateKeyPem);
  ed25519PrivateKey('LICENSE_SIGNING_KEY', v.licenseSigningKeyPem);
  if (v.jwtPreviousPublicKeysPem !== undefined) {
    const blocks = v.jwtPreviousPublicKeysPem.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? [];
    const parses = (pem: string) => {
      try {
        return createPublicKey(pem).asymmetricKeyType === 'ed25519';
      } catch {
        return false;
      }
    };
    if (blocks.length === 0 || !blocks.every(parses))
      throw new ConfigError('JWT_PREVIOUS_PUBLIC_KEYS', '***', 'Ed25519 public keys in SPKI PEM (-----BEGIN PUBLIC KEY-----), concatenated');
  }
  if (v.licenseSecretKey !== undefined && v.licenseSecretKey.length < 32)
    throw new ConfigError('LICENSE_SECRET_KEY', '***', 'a secret of at least 32 characters');
  // The key ring's own error names the variable and the entry's problem, never the key.
  if (v.encryptionKeys !== undefined) EnvelopeEncryption.fromSpec(v.encryptionKeys);
  // The user `admin` gets it on a fresh database: the password policy of every user applies.
  const weak = v.bootstrapAdminPassword === undefined ? null : passwordProblem(v.bootstrapAdminPassword, 'admin');
  if (weak) throw new ConfigError('BOOTSTRAP_ADMIN_PASSWORD', '***', `a password that follows the password policy (it ${weak})`);
  if (!SENDER.test(v.mailFrom)) throw new ConfigError('MAIL_FROM', v.mailFrom, 'an e-mail address, optionally with a name: Shop <shop@example.com>');
}
