/**
 * Handlers of the battery operations (one per operationId; thin: domain logic lives in services).
 */
import type { Handlers } from '@sports-timing/shared';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';

/** battery handlers. */
export function batteryHandlers(_ctx: OrderingDeps): Handlers<operations> {
  return {};
}
