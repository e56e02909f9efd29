/**
 * Handlers of the battery lookup (`getSiCardBattery`; problem+json errors) and of the maintenance
 * import of battery dates. The client-id headers are accepted and never decide access (`x-roles: [anonymous]`).
 */
import type { Handlers } from '@sports-timing/shared';
import { importBatteryDates, lookupBattery } from '../battery/battery.service';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';

/** Battery handlers. */
export function batteryHandlers(ctx: OrderingDeps): Handlers<operations> {
  const db = ctx.database.db;
  return {
    async getSiCardBattery(req, res) {
      res.json(await lookupBattery(db, req.params.cardNumber));
    },
    async importBatteryDates(req, res) {
      res.json(await importBatteryDates(db, req.body));
    },
  };
}
