/**
 * (h) The rolling upgrade from the previous release (SCALING.md "Rolling upgrade"): a topology started on the
 * previous release's compiled services (test/topology/release.ts) under punch and shop load; the new release's
 * migrations run while the old instances serve; then each instance, one at a time, is stopped with SIGTERM and
 * started on this checkout's code, so old and new instances serve together for a while. Every poller must hold
 * every punch exactly once, every acknowledged order must be stored once with one confirmation mail — the same
 * checks as the kill scenarios (punch-scenarios.ts, order-scenarios.ts).
 */
import { execFileSync } from 'node:child_process';
import { ROOT } from '../support/service-process';
import { orderDelivery, type OrderDeliveryResult } from './order-scenarios';
import { punchDelivery, type PunchDeliveryResult } from './punch-scenarios';
import { migrateWith, type Release } from './release';
import type { Topology } from './topology';

/** Figures of {@link rollingUpgrade}. */
export interface RollingUpgradeResult {
  /** Commits of the release upgraded from and to (12 hex digits). */
  from: string;
  to: string;
  punches: PunchDeliveryResult;
  orders: OrderDeliveryResult;
  violations: string[];
}

/**
 * Upgrades every instance of `t` (started with `codeRoot: release.root`) to this checkout under load: timing and
 * ordering at the same time, each service's migrations first. `durationMs` is the least load time; the load goes on
 * until both upgrades are over.
 */
export async function rollingUpgrade(
  t: Topology,
  o: { release: Release; durationMs: number; mixedMs: number; tag: string; firstCard: number },
): Promise<RollingUpgradeResult> {
  const upgrade = (instances: Topology['timing'], service: 'timing' | 'ordering') => ({
    mode: 'upgrade' as const,
    instances,
    atMs: 2_000,
    codeRoot: ROOT,
    migrate: () => migrateWith(ROOT, service, t.primaryUrl),
    mixedMs: o.mixedMs,
  });
  const [punches, orders] = await Promise.all([
    punchDelivery(t, { uploaders: 8, pollers: 4, durationMs: o.durationMs, tag: `${o.tag}p`, disruption: upgrade(t.timing, 'timing') }),
    orderDelivery(t, {
      clients: 4,
      orders: 20,
      firstCard: o.firstCard,
      tag: `${o.tag}o`,
      paceMs: 100,
      whileDisrupted: true,
      disruption: upgrade(t.ordering, 'ordering'),
    }),
  ]);
  const to = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  return {
    from: o.release.commit.slice(0, 12),
    to: to.slice(0, 12),
    punches,
    orders,
    violations: [...punches.violations.map((v) => `punches: ${v}`), ...orders.violations.map((v) => `orders: ${v}`)],
  };
}
