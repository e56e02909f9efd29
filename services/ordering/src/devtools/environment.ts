/**
 * `devGetEnvironment` (schema `DevEnvironment`): what an operator needs to know about an
 * instance. Built from named fields only, never by dumping configuration or `process.env`, so no secret,
 * key or credential-bearing URL can appear in it.
 */
import os from 'node:os';
import type { Kysely } from 'kysely';
import { loadProcessConfig } from '@sports-timing/shared';
import type { AppEnvironment } from '@sports-timing/shared';
import type { DB } from '../db/schema';
import { countPending } from '../outbox/outbox.repository';
import { PACKAGE_VERSION } from '../version';
import { boundedCheck, type DependencyReport, type DependencyState } from './status';

/** Process start (UTC), fixed when the module loads relative to Node's own uptime. */
const STARTED_AT = new Date(Date.now() - process.uptime() * 1000);

/** The `dev/environment` answer. */
export interface EnvironmentInfo {
  environment: AppEnvironment;
  serviceName: string;
  version: string;
  commit: string | null;
  nodeVersion: string;
  hostname: string;
  /** RFC 3339 UTC. */
  startedAt: string;
  uptimeSeconds: number;
  maintenanceMode: boolean;
  database: { status: DependencyState; serverVersion: string | null; latencyMs: number | null };
  /** Outbox messages not yet sent (mail backlog); null when the database does not answer. */
  outboxPending: number | null;
  dependencies: { smtp: DependencyState; erp: DependencyState; paymentProvider: DependencyState };
}

/** Assembles the answer from a fresh dependency round, the maintenance flag and the outbox backlog. */
export async function describeEnvironment(input: {
  environment: AppEnvironment;
  db: Kysely<DB>;
  report: DependencyReport;
  maintenanceMode: boolean;
  timeoutMs?: number;
}): Promise<EnvironmentInfo> {
  let outboxPending: number | null = null;
  if (input.report.database.status === 'up') {
    await boundedCheck(async () => {
      outboxPending = await countPending(input.db);
      return 'up';
    }, input.timeoutMs);
  }
  return {
    environment: input.environment,
    serviceName: 'ordering',
    version: PACKAGE_VERSION,
    commit: loadProcessConfig().gitCommit ?? null,
    nodeVersion: process.version,
    hostname: os.hostname(),
    startedAt: STARTED_AT.toISOString(),
    uptimeSeconds: Math.round(process.uptime() * 1000) / 1000,
    maintenanceMode: input.maintenanceMode,
    database: input.report.database,
    outboxPending,
    dependencies: { smtp: input.report.smtp, erp: input.report.erp, paymentProvider: input.report.paymentProvider },
  };
}
