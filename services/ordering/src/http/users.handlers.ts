/**
 * Handlers of the users operations (one per operationId; thin: domain logic lives in services).
 */
import type { Handlers } from '@sports-timing/shared';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';

/** users handlers. */
export function usersHandlers(_ctx: OrderingDeps): Handlers<operations> {
  return {};
}
