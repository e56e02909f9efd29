/**
 * All operation handlers of the ordering service, by operationId.
 */
import type { HandlerMap } from '@sports-timing/shared';
import type { OrderingContext } from '../composition';
import { authHandlers } from './auth.handlers';
import { batteryHandlers } from './battery.handlers';
import { cardReservationHandlers } from './card-reservation.handlers';
import { devIdentityHandlers } from './dev-identity.handlers';
import { devHandlers } from './dev.handlers';
import { erpHandlers } from './erp.handlers';
import { licensingHandlers } from './licensing.handlers';
import { maintenanceHandlers } from './maintenance.handlers';
import { ordersHandlers } from './orders.handlers';
import { paymentHandlers } from './payment.handlers';
import { shopHandlers } from './shop.handlers';
import { systemHandlers } from './system.handlers';
import { usersHandlers } from './users.handlers';

/** Every handler; an operation of the spec without one answers 501. */
export function allHandlers(ctx: OrderingContext, apiVersion: string): HandlerMap {
  return {
    ...systemHandlers(ctx, apiVersion),
    ...authHandlers(ctx),
    ...usersHandlers(ctx),
    ...devIdentityHandlers(ctx),
    ...licensingHandlers(ctx),
    ...shopHandlers(ctx),
    ...cardReservationHandlers(ctx),
    ...ordersHandlers(ctx),
    ...paymentHandlers(ctx),
    ...batteryHandlers(ctx),
    ...maintenanceHandlers(ctx),
    ...devHandlers(ctx),
    ...erpHandlers(ctx),
  };
}
