/**
 * Handlers of the licensing operations (one per operationId; thin: domain logic lives in services).
 */
import type { Handlers } from '@sports-timing/shared';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';

/** licensing handlers. */
export function licensingHandlers(_ctx: OrderingDeps): Handlers<operations> {
  return {};
}
