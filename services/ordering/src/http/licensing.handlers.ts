/**
 * Handlers of the licensing operations (tag `licensing`); thin: the rules live in
 * `identity/licensing.service.ts`.
 */
import { principalOf, type Handlers } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import type { OrderingContext } from '../composition';
import type { operations } from '../generated/openapi';

/** licensing handlers. */
export function licensingHandlers(ctx: OrderingContext): Handlers<operations> {
  const identity = ctx.services.identity;
  const caller = (res: { locals: Record<string, unknown> }) => principalOf<Principal>(res as never)!;
  return {
    async createLicenses(req, res) {
      await identity.licensing.create(req.query.product, req.query.numberOfLicenses);
      res.status(200).end();
    },
    async getLicenseSecretHashes(req, res) {
      res.json(await identity.licensing.secretHashes(req.query.product));
    },
    async assignLicense(req, res) {
      res.json(await identity.licensing.assign(req.body));
    },
    async requestLicenseKey(req, res) {
      await identity.licensing.requestKey(caller(res), req.body);
      res.status(200).end();
    },
    async listLicenses(req, res) {
      res.json(await identity.licensing.list(caller(res), req.query.email, req.query.product));
    },
    async getLicensePublicKey(_req, res) {
      res.json(await identity.licenseSigner.publicKeyDto());
    },
  };
}
