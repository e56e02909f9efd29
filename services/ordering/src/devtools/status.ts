/**
 * Dependency status for `devGetUptimeMonitorStatus` and `devGetEnvironment`: database,
 * SMTP, ERP system and payment provider, each checked in parallel and each bounded by a timeout, so a
 * status request never hangs on a dependency that does not answer.
 *
 * The ERP and payment clients plug in through {@link StatusProbe} (`OrderingDeps.statusProbes`); a
 * dependency without a probe is `disabled` (not configured), which does not degrade the status. Until a
 * client offers a better check, {@link httpProbe} over its configured base URL is the probe to use.
 */
import type pg from 'pg';
import { databaseServerVersion } from '@sports-timing/shared';
import type { components } from '../generated/openapi';
import type { Mailer } from '../mail/mailer';

/** State of one dependency (spec `DependencyState`). */
export type DependencyState = components['schemas']['DependencyState'];

/** A reachability check of one third-party system. */
export interface StatusProbe {
  /**
   * Resolves `up` when the system answers, `down` otherwise; should stop work when `signal` aborts (the
   * caller stops waiting at its timeout either way). A rejection counts as `down`.
   */
  check(signal: AbortSignal): Promise<'up' | 'down'>;
}

/** Probes of the third-party systems that report them (filled in by the ERP and payment clients). */
export interface StatusProbes {
  erp?: StatusProbe;
  paymentProvider?: StatusProbe;
}

/** Default bound of one check, ms (spec: "time out after 3 seconds"). */
const CHECK_TIMEOUT_MS = 3_000;

/**
 * A probe that sends `HEAD <url>`: any HTTP answer below 500 (including 401/404: the server is there) is
 * `up`; a 5xx answer, a network error or the abort is `down`.
 */
export function httpProbe(url: string): StatusProbe {
  return {
    async check(signal) {
      const res = await fetch(url, { method: 'HEAD', signal, redirect: 'manual' });
      await res.body?.cancel().catch(() => undefined);
      return res.status < 500 ? 'up' : 'down';
    },
  };
}

/** Runs `check` with a timeout: `down` on rejection or when `timeoutMs` passes first. */
export async function boundedCheck(check: (signal: AbortSignal) => Promise<'up' | 'down'>, timeoutMs: number = CHECK_TIMEOUT_MS): Promise<'up' | 'down'> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'down'>((resolve) => {
    timer = setTimeout(() => {
      ac.abort();
      resolve('down');
    }, timeoutMs);
  });
  try {
    return await Promise.race([check(ac.signal).catch((): 'down' => 'down'), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Result of the database check. */
export interface DatabaseStatus {
  status: 'up' | 'down';
  /** `server_version` of PostgreSQL; null when down. */
  serverVersion: string | null;
  /** Round-trip time of the check query, ms; null when down. */
  latencyMs: number | null;
}

/** One round of checks (spec `UptimeMonitorStatus.checks`, `DevEnvironment.dependencies`). */
export interface DependencyReport {
  checkedAt: Date;
  database: DatabaseStatus;
  smtp: DependencyState;
  erp: DependencyState;
  paymentProvider: DependencyState;
}

/** What the monitor checks. */
export interface DependencyMonitorOptions {
  pool: pg.Pool;
  mailer: Pick<Mailer, 'isUp'>;
  /** Whether SMTP is configured; without it mail goes to `.eml` files and SMTP is `disabled`. */
  smtpConfigured: boolean;
  probes?: StatusProbes;
  /** Bound of each check, ms (default 3000). */
  timeoutMs?: number;
  /** How long a round is reused, ms (default 30000, spec of `uptime-monitor-status`). */
  cacheMs?: number;
}

/** Checks all dependencies in parallel; rounds are cached and concurrent callers share one round. */
export class DependencyMonitor {
  private last: DependencyReport | undefined;
  private inflight: Promise<DependencyReport> | undefined;

  constructor(private readonly opts: DependencyMonitorOptions) {}

  /** The latest round when younger than `cacheMs`, else a new one; `fresh` forces a new round. */
  async report(fresh = false): Promise<DependencyReport> {
    if (!fresh && this.last && Date.now() - this.last.checkedAt.getTime() < (this.opts.cacheMs ?? 30_000)) return this.last;
    if (this.inflight) return this.inflight;
    const round = this.check().finally(() => {
      if (this.inflight === round) this.inflight = undefined;
    });
    this.inflight = round;
    this.last = await round;
    return this.last;
  }

  private async check(): Promise<DependencyReport> {
    const timeoutMs = this.opts.timeoutMs ?? CHECK_TIMEOUT_MS;
    const probe = async (p: StatusProbe | undefined): Promise<DependencyState> => (p ? boundedCheck((s) => p.check(s), timeoutMs) : 'disabled');
    const checkedAt = new Date();
    const [database, smtp, erp, paymentProvider] = await Promise.all([
      this.checkDatabase(timeoutMs),
      this.opts.smtpConfigured
        ? boundedCheck(async () => ((await this.opts.mailer.isUp()) ? 'up' : 'down'), timeoutMs)
        : Promise.resolve<DependencyState>('disabled'),
      probe(this.opts.probes?.erp),
      probe(this.opts.probes?.paymentProvider),
    ]);
    return { checkedAt, database, smtp, erp, paymentProvider };
  }

  private async checkDatabase(timeoutMs: number): Promise<DatabaseStatus> {
    let serverVersion: string | null = null;
    let latencyMs: number | null = null;
    const status = await boundedCheck(async () => {
      ({ serverVersion, latencyMs } = await databaseServerVersion(this.opts.pool));
      return 'up';
    }, timeoutMs);
    return status === 'up' ? { status, serverVersion, latencyMs } : { status, serverVersion: null, latencyMs: null };
  }
}

/** `ok` when no dependency is `down` (spec `UptimeMonitorStatus.status`). */
export function overallStatus(r: DependencyReport): 'ok' | 'degraded' {
  return [r.database.status, r.smtp, r.erp, r.paymentProvider].includes('down') ? 'degraded' : 'ok';
}
