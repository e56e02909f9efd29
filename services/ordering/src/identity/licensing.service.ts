/**
 * Licensing (tag `licensing`): creation of free licenses, their secret hashes, atomic assignment to a
 * customer e-mail, signed license keys mailed through the outbox, and listing.
 *
 * Secrets: each license's 256-bit secret is HMAC-SHA-256(license secret key, "license-secret:v1:" + id)
 * over its random UUID. The database stores only SHA-256(secret) (what `secret-hashes` lists), yet the
 * service can show the secret again to the license's owner and to staff.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError, validationError, type Database } from '@sports-timing/shared';
import { isStaff, type Principal } from '../auth/principal';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { enqueueMail } from '../outbox/outbox.service';
import type { LicenseSigner } from './license-keys';
import * as repo from './licensing.repository';
import type { LicenseRow } from './licensing.repository';
import { sha256Hex } from './secrets';
import { findUserById } from './users.repository';

/** `LicenseInformation` of the spec. */
export type LicenseInformationDto = components['schemas']['LicenseInformation'];
/** `LicensedProduct` of the spec. */
export type LicensedProduct = components['schemas']['LicensedProduct'];

/** Display names of the products (mail texts). */
const PRODUCT_NAMES: Record<LicensedProduct, string> = {
  sportidentConfigPlus: 'SPORTident Config+',
  sportidentCenterPro: 'SPORTident Center Pro',
  sportidentReaderApp: 'SPORTident Reader App',
  resultsManager: 'Results Manager',
};

/** Options of {@link LicensingService}. */
export interface LicensingOptions {
  database: Database<DB>;
  signer: LicenseSigner;
  /** Key of the HMAC deriving license secrets (at least 32 characters). */
  secretKey: string;
  /** Limits license-key requests per caller. */
  keyRequestLimiter: RateLimiterAbstract;
}

const notFound = () => new ApiError(404, 'No such license is assigned to this address.');

/** Licenses and license keys. */
export class LicensingService {
  constructor(private readonly opts: LicensingOptions) {
    if (opts.secretKey.length < 32) throw new Error('LICENSE_SECRET_KEY must be at least 32 characters long');
  }

  private get db() {
    return this.opts.database.db;
  }

  /** The secret of a license (base64url, 256 bits). */
  secretOf(licenseId: string): string {
    return createHmac('sha256', this.opts.secretKey).update(`license-secret:v1:${licenseId}`).digest('base64url');
  }

  private toDto(row: LicenseRow): LicenseInformationDto {
    return {
      product: row.product as LicensedProduct,
      email: row.email ?? '',
      licenseId: row.id,
      secret: this.secretOf(row.id),
      key: row.license_key,
      ...(row.assigned_at ? { assignedAt: row.assigned_at.toISOString() } : {}),
      keyIssuedAt: row.key_issued_at ? row.key_issued_at.toISOString() : null,
    };
  }

  /** Creates `count` (1–1000, bounded by the spec) free licenses of `product`. */
  async create(product: LicensedProduct, count: number): Promise<void> {
    const rows = Array.from({ length: count }, () => {
      const id = randomUUID();
      return { id, product, secret_hash: sha256Hex(this.secretOf(id)) };
    });
    await repo.insertLicenses(this.db, rows);
  }

  /** SHA-256 hex of every secret of `product`, in creation order. */
  secretHashes(product: LicensedProduct): Promise<string[]> {
    return repo.secretHashesOf(this.db, product);
  }

  /**
   * Binds a free license (or the free license `licenseId`) of `product` to `email`, atomically. 409 when
   * none is free or `licenseId` is taken; 404 when `licenseId` does not exist for the product.
   */
  async assign(input: LicenseInformationDto): Promise<LicenseInformationDto> {
    if (input.licenseId) {
      const row = await repo.assignLicenseById(this.db, input.licenseId, input.product, input.email);
      if (row) return this.toDto(row);
      const existing = await repo.findLicense(this.db, input.licenseId);
      if (!existing || existing.product !== input.product) throw new ApiError(404, 'No such license of this product.');
      throw new ApiError(409, 'The license is already assigned.');
    }
    const row = await repo.assignFreeLicense(this.db, input.product, input.email);
    if (!row) throw new ApiError(409, 'No free license of this product is left.');
    return this.toDto(row);
  }

  /** The caller's e-mail address and whether it is verified (users only; service clients have none). */
  private async emailOf(caller: Principal): Promise<{ email: string; verified: boolean } | null> {
    if (caller.kind !== 'user') return null;
    const user = await findUserById(this.db, caller.id);
    return user ? { email: user.email, verified: user.email_verified } : null;
  }

  /**
   * Whether the caller may act on licenses of `email`: staff any; others only their own address, and
   * only once they verified it (a license follows the mailbox, not whatever address a profile claims).
   */
  private async mayUse(caller: Principal, email: string): Promise<boolean> {
    if (isStaff(caller)) return true;
    const own = await this.emailOf(caller);
    return own !== null && own.verified && own.email.toLowerCase() === email.toLowerCase();
  }

  /**
   * Issues a signed key for the caller's license (staff: anyone's) and mails key and secret to the
   * license's address through the outbox, in one transaction. 404 for foreign addresses and missing
   * licenses alike; 429 over 10 requests per caller and hour.
   */
  async requestKey(caller: Principal, input: LicenseInformationDto): Promise<void> {
    try {
      await this.opts.keyRequestLimiter.consume(`${caller.kind}:${caller.id}`);
    } catch (err) {
      if (err instanceof RateLimiterRes)
        throw new ApiError(429, 'Too many license-key requests; retry later.', {
          headers: { 'Retry-After': String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))) },
        });
      throw err;
    }
    if (!(await this.mayUse(caller, input.email))) throw notFound();
    await this.db.transaction().execute(async (trx) => {
      const license = await repo.lockAssignedLicense(trx, input.product, input.email, input.licenseId);
      if (!license || !license.email) throw notFound();
      const issuedAt = new Date();
      const secret = this.secretOf(license.id);
      const key = this.opts.signer.sign({
        v: 1,
        licenseId: license.id,
        product: license.product,
        email: license.email,
        secretHash: license.secret_hash,
        issuedAt: issuedAt.toISOString(),
      });
      const stored = await repo.storeLicenseKey(trx, license.id, key, issuedAt);
      const product = PRODUCT_NAMES[license.product as LicensedProduct] ?? license.product;
      await enqueueMail(trx, `license-key:${license.id}:${stored.keys_issued}`, {
        to: license.email,
        subject: `Your ${product} license key`,
        language: 'en',
        text: [
          `Hello,`,
          ``,
          `here is your license for ${product}.`,
          ``,
          `License id: ${license.id}`,
          `Activation secret: ${secret}`,
          ``,
          `License key:`,
          key,
          ``,
          `The key is signed; your software verifies it offline.`,
        ].join('\n'),
      });
    });
  }

  /**
   * Licenses assigned to `email` (default: the caller's own address), optionally of one product.
   * Non-staff callers asking for another address, or for their own before verifying it, get 404.
   */
  async list(caller: Principal, email: string | undefined, product: LicensedProduct | undefined): Promise<LicenseInformationDto[]> {
    const address = email ?? (await this.emailOf(caller))?.email;
    if (!address) throw validationError({ email: ['is required for callers without an e-mail address'] });
    if (!(await this.mayUse(caller, address))) throw new ApiError(404, 'No licenses are visible for this address.');
    return (await repo.licensesOf(this.db, address, product)).map((r) => this.toDto(r));
  }
}
