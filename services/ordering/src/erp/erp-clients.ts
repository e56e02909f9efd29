/**
 * The ERP client and token store of the app (docs/decisions.md §6 ERP): one {@link ErpClient} serving both ERP
 * systems (every call names its system), whose API token for a system comes from the encrypted store
 * (`dev/set-erp-api-token`) or, while none is stored, from the configuration (`ERP_API_TOKEN_WECLAPP` /
 * `ERP_API_TOKEN_WECLAPP_SANDBOX`; in development and test the ERP simulator's development tokens).
 *
 * Built once per app by the composition root (`composeOrdering`); handlers get it as `ctx.services.erpClients`:
 *
 *     const erp = ctx.services.erpClients.client;
 *     const order = await erp.createSalesOrder('weclapp', body, reference); // ErpError on failure
 *
 * Tokens are decrypted on demand and cached per app for {@link TOKEN_CACHE_MS}; setting a token
 * invalidates this app's cache at once, other instances pick it up within that time.
 */
import type { Kysely } from 'kysely';
import type { OrderingConfig } from '../config';
import type { EnvelopeEncryption } from '../crypto/aead';
import type { DB } from '../db/schema';
import { createErpClient, type ErpClient, type ErpClientOptions } from './erp.client';
import { findStoredToken, upsertStoredToken } from './erp-token.repository';
import type { ErpSystem } from './erp.types';

/** How long a decrypted token is reused before the store is read again, ms. */
const TOKEN_CACHE_MS = 60_000;

/** Authenticated data binding a stored token's ciphertext to its ERP system (a swapped row fails). */
function erpTokenAad(system: ErpSystem): string {
  return `erp-api-token:${system}`;
}

/** Masked form of a token: `***` plus its last 4 characters (the whole token stays hidden when ≤ 8 long). @internal */
export function maskToken(token: string): string {
  return token.length > 8 ? `***${token.slice(-4)}` : '***';
}

/** What `dev/get-erp-api-token` shows (ordering spec `ErpApiTokenInfo`). */
export interface ErpTokenInfo {
  erpSystem: ErpSystem;
  isSet: boolean;
  maskedToken: string | null;
  keyVersion: number | null;
  updatedAt: string | null;
}

/** Where a token in use came from. */
export type ErpTokenSource = 'stored' | 'configured';

/** ERP clients and token store of one app. */
export class ErpClients {
  /** The one client of the app, for both systems: each method takes the system it calls. */
  readonly client: ErpClient;
  private readonly cache = new Map<ErpSystem, { at: number; token: Promise<{ token: string; source: ErpTokenSource }> }>();

  constructor(
    private readonly deps: { db: Kysely<DB>; config: OrderingConfig; encryption: EnvelopeEncryption },
    overrides: Omit<ErpClientOptions, 'baseUrls' | 'tokenProvider'> = {},
  ) {
    this.client = createErpClient(deps.config, async (system) => (await this.token(system)).token, { timeoutMs: deps.config.erpTimeoutMs, ...overrides });
  }

  /**
   * The token in use for `system`: the stored one (decrypted; a row that fails authentication — swapped,
   * truncated, tampered, unknown key — throws `DecryptionError`, it never falls back silently) or else
   * the configured one. Rejects with an Error when neither exists.
   */
  async token(system: ErpSystem): Promise<{ token: string; source: ErpTokenSource }> {
    const hit = this.cache.get(system);
    if (hit && Date.now() - hit.at < TOKEN_CACHE_MS) return hit.token;
    const token = this.load(system);
    this.cache.set(system, { at: Date.now(), token });
    // A failed load is not cached: the next call tries again.
    token.catch(() => {
      if (this.cache.get(system)?.token === token) this.cache.delete(system);
    });
    return token;
  }

  private async load(system: ErpSystem): Promise<{ token: string; source: ErpTokenSource }> {
    const stored = await findStoredToken(this.deps.db, system);
    if (stored) return { token: this.deps.encryption.decrypt(stored.ciphertext, erpTokenAad(system)), source: 'stored' };
    const configured = this.deps.config.erpApiTokens[system];
    if (configured) return { token: configured, source: 'configured' };
    throw new Error(`no ERP API token for ${system}`);
  }

  /**
   * Checks a candidate token with one cheap ERP call before it is stored: answers `rejected` when the ERP
   * answers 401/403 (the token is wrong), else `accepted` — also when the ERP is unreachable, so a token can
   * be rotated during an ERP outage.
   */
  async checkToken(system: ErpSystem, token: string): Promise<'accepted' | 'rejected'> {
    const probe = createErpClient(this.deps.config, async () => token, {
      timeoutMs: this.deps.config.erpTimeoutMs,
      retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    });
    const ping = await probe.ping(system);
    return ping.httpStatus === 401 || ping.httpStatus === 403 ? 'rejected' : 'accepted';
  }

  /** Stores `token` for `system` encrypted under the current key and drops this app's cached token. */
  async setToken(system: ErpSystem, token: string, updatedBy: string): Promise<void> {
    const ciphertext = this.deps.encryption.encrypt(token, erpTokenAad(system));
    await upsertStoredToken(this.deps.db, system, ciphertext, this.deps.encryption.currentVersion, updatedBy);
    this.invalidate(system);
  }

  /** Drops the cached token of `system` (or of all systems). */
  invalidate(system?: ErpSystem): void {
    if (system) this.cache.delete(system);
    else this.cache.clear();
  }

  /** Masked view of the stored token; a stored row that no longer decrypts is reported as set with mask `***`. */
  async info(system: ErpSystem): Promise<ErpTokenInfo> {
    const stored = await findStoredToken(this.deps.db, system);
    if (!stored) return { erpSystem: system, isSet: false, maskedToken: null, keyVersion: null, updatedAt: null };
    let masked = '***';
    try {
      masked = maskToken(this.deps.encryption.decrypt(stored.ciphertext, erpTokenAad(system)));
    } catch {
      // Undecryptable (tampered, key removed): say it is set but unusable rather than failing the read.
    }
    return { erpSystem: system, isSet: true, maskedToken: masked, keyVersion: stored.keyVersion, updatedAt: stored.updatedAt.toISOString() };
  }
}
