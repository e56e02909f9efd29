/**
 * Handlers of the maintenance area (tag `maintenance`) owned here: maintenance mode, certificates,
 * caches and the outbox's dead letters. The ERP imports of the same area are registered by the ERP module.
 */
import { principalOf, specFilled, type Handlers } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import type { OrderingContext } from '../composition';
import type { operations } from '../generated/openapi';
import { listDeadJobs, retryDeadJob } from '../outbox/dead-jobs.service';
import { certificateSubject, createCertificate, type CertificatePurpose } from '../maintenance/certificates';

/** `user:<id>:<name>` / `client:<id>:<name>` of the caller, for the flag's audit columns and logs. */
function actor(p: Principal | null): string {
  return p ? `${p.kind}:${p.id}:${p.name}` : 'anonymous';
}

/** Maintenance-mode, certificate and cache handlers. */
export function maintenanceHandlers(ctx: OrderingContext): Handlers<operations> {
  const mode = ctx.services.maintenance;
  const certificate = async (purpose: CertificatePurpose) =>
    (await createCertificate(purpose, certificateSubject('ordering', ctx.config.environment, purpose))).pem;
  return {
    async enableMaintenanceMode(_req, res) {
      await mode.set(true, actor(principalOf<Principal>(res)));
      res.status(200).end();
    },
    async disableMaintenanceMode(_req, res) {
      await mode.set(false, actor(principalOf<Principal>(res)));
      res.status(200).end();
    },
    async createEncryptionCertificate(_req, res) {
      // The body holds a private key: never cached, never logged (the logger records no bodies).
      res.set('Cache-Control', 'no-store').json(await certificate('encryption'));
    },
    async createSigningCertificate(_req, res) {
      res.set('Cache-Control', 'no-store').json(await certificate('signing'));
    },
    async listDeadJobs(req, res) {
      const { kind, beforeId } = req.query;
      res.json(await listDeadJobs(ctx.database.db, { kind, beforeId, limit: specFilled(req.query.limit, 'listDeadJobs limit') }));
    },
    async retryDeadJob(req, res) {
      const job = await retryDeadJob(ctx.database.db, Number(req.params.id));
      ctx.logger.info(
        { outboxId: job.id, kind: job.kind, dedupeKey: job.dedupeKey, by: actor(principalOf<Principal>(res)) },
        'dead outbox job given another run',
      );
      res.json(job);
    },
    async clearCaches(_req, res) {
      const local = await ctx.services.caches.clearEverywhere(ctx.database.db, ctx.logger);
      ctx.logger.info({ cleared: local.cleared, failed: local.failed, by: actor(principalOf<Principal>(res)) }, 'caches cleared; other instances notified');
      res.status(200).end();
    },
  };
}
