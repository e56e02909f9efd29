/**
 * Handlers of the card-reservation operations (one per operationId; thin: domain logic lives in services).
 */
import type { Handlers } from '@sports-timing/shared';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';

/** card-reservation handlers. */
export function cardReservationHandlers(_ctx: OrderingDeps): Handlers<operations> {
  return {};
}
