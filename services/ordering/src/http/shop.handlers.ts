/**
 * Handlers of the shop operations (one per operationId; thin: domain logic lives in services).
 */
import type { Handlers } from '@sports-timing/shared';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';

/** shop handlers. */
export function shopHandlers(_ctx: OrderingDeps): Handlers<operations> {
  return {};
}
