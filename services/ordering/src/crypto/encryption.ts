/**
 * The service's {@link EnvelopeEncryption} for a set of dependencies. `server.ts` always supplies
 * `deps.encryption` (from `ENCRYPTION_KEYS`, or in development a key ring generated once into
 * `.data/keys/encryption-keys`). Apps built without it (tests) get one from `config.encryptionKeys`, or
 * else an ephemeral random key ring per configuration object: ciphertexts then live as long as the app.
 *
 * Usage (e.g. stored ERP API tokens, AAD bound to the row's context):
 *
 *     const enc = encryptionOf(deps);
 *     const stored = enc.encrypt(token, `erp-api-token:${erpSystem}`);
 *     const token = enc.decrypt(stored, `erp-api-token:${erpSystem}`); // DecryptionError when swapped or tampered
 */
import type { OrderingConfig } from '../config';
import { EnvelopeEncryption, generateKeyRingSpec } from './aead';

const byConfig = new WeakMap<OrderingConfig, EnvelopeEncryption>();

/** `deps.encryption`, else one built (once per config object) as described above. */
export function encryptionOf(deps: { encryption?: EnvelopeEncryption; config: OrderingConfig }): EnvelopeEncryption {
  if (deps.encryption) return deps.encryption;
  let e = byConfig.get(deps.config);
  if (!e) {
    e = EnvelopeEncryption.fromSpec(deps.config.encryptionKeys ?? generateKeyRingSpec());
    byConfig.set(deps.config, e);
  }
  return e;
}
