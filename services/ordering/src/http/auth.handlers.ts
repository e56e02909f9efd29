/**
 * Handlers of the auth operations (one per operationId; thin: domain logic lives in services).
 */
import type { Handlers } from '@sports-timing/shared';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';

/** auth handlers. */
export function authHandlers(_ctx: OrderingDeps): Handlers<operations> {
  return {};
}
