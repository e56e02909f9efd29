/**
 * New key pairs with self-signed X.509 certificates (`createEncryptionCertificate`,
 * `createSigningCertificate`), made with `@peculiar/x509` over Node's WebCrypto. Nothing is stored: the
 * operator copies the PEM into the secret configuration.
 *
 * - Encryption: RSA 3072 (public exponent 65537), key usage keyEncipherment + dataEncipherment (critical).
 *   WebCrypto cannot sign with an RSA-OAEP key, so the pair is generated as RSASSA-PKCS1-v1_5 to sign its own
 *   certificate; the exported keys are plain `rsaEncryption` keys, usable for RSA-OAEP by any consumer.
 * - Signing: ECDSA P-256, key usage digitalSignature (critical), self-signature ECDSA with SHA-256.
 * - Both: subject = issuer = `CN=<service> <environment> <purpose>, O=sports-timing`, validity two years from
 *   now (notBefore one minute in the past against clock skew), random positive 128-bit serial, basic
 *   constraints CA:false (critical) and a subject key identifier.
 * - Output: the PKCS#8 private key PEM followed by the certificate PEM, separated by a newline.
 */
// @peculiar/x509 resolves its ASN.1 services through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/** What a certificate is for. */
export type CertificatePurpose = 'encryption' | 'signing';

/** A generated key pair and certificate as PEM texts. */
export interface GeneratedCertificate {
  /** PKCS#8 private key, `-----BEGIN PRIVATE KEY-----`. */
  privateKeyPem: string;
  /** X.509 certificate, `-----BEGIN CERTIFICATE-----`. */
  certificatePem: string;
  /** Both, private key first (the body of the spec's string response). */
  pem: string;
}

/** Validity of generated certificates, in years. */
const CERTIFICATE_VALIDITY_YEARS = 2;

const crypto = webcrypto;

function keyAlgorithm(purpose: CertificatePurpose): webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams {
  return purpose === 'encryption'
    ? { name: 'RSASSA-PKCS1-v1_5', modulusLength: 3072, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }
    : { name: 'ECDSA', namedCurve: 'P-256' };
}

function signingAlgorithm(purpose: CertificatePurpose): webcrypto.Algorithm | webcrypto.EcdsaParams {
  return purpose === 'encryption' ? { name: 'RSASSA-PKCS1-v1_5' } : { name: 'ECDSA', hash: 'SHA-256' };
}

function keyUsage(purpose: CertificatePurpose): number {
  return purpose === 'encryption' ? x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.dataEncipherment : x509.KeyUsageFlags.digitalSignature;
}

/** A random positive serial of 16 bytes as hex (RFC 5280 §4.1.2.2: positive, at most 20 octets). */
function randomSerial(): string {
  const b = randomBytes(16);
  b[0] = (b[0] & 0x7f) | 0x01;
  return b.toString('hex');
}

/** The distinguished name of a certificate, e.g. `CN=ordering production encryption, O=sports-timing`. */
export function certificateSubject(serviceName: string, environment: string, purpose: CertificatePurpose): string {
  const safe = (s: string) => s.replace(/[^\w .-]/g, '');
  return `CN=${safe(serviceName)} ${safe(environment)} ${purpose}, O=sports-timing`;
}

/** Generates a key pair and a self-signed certificate for `purpose`; `now` for tests. */
export async function createCertificate(purpose: CertificatePurpose, subject: string, now: Date = new Date()): Promise<GeneratedCertificate> {
  const keys = await crypto.subtle.generateKey(keyAlgorithm(purpose), true, ['sign', 'verify']);
  const notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + CERTIFICATE_VALIDITY_YEARS);
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomSerial(),
      name: subject,
      notBefore,
      notAfter,
      keys,
      signingAlgorithm: signingAlgorithm(purpose),
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(keyUsage(purpose), true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey('pkcs8', keys.privateKey));
  const privateKeyPem = x509.PemConverter.encode(pkcs8, 'PRIVATE KEY');
  const certificatePem = cert.toString('pem');
  return { privateKeyPem, certificatePem, pem: `${privateKeyPem.trim()}\n${certificatePem.trim()}\n` };
}
