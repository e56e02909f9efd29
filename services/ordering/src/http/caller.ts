/**
 * Who a request comes from, for per-caller rate limits and `Idempotency-Key` scopes (ordering spec parameter
 * `IdempotencyKey`, rate limits of `info.description` "Errors"): the authenticated principal, else the registered
 * service client, else the client address. An unverified client-id header is never used: it would let a caller
 * pick a fresh counter or scope per request.
 */
import type { Request, Response } from 'express';
import { clientIp } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';

/** `user:<id>` / `client:<id>` (principal), `service-client:<id>` (registered client id header) or `ip:<address>`. */
export function requestCaller(req: Request, res: Response): string {
  const p = res.locals.principal as Principal | null | undefined;
  if (p) return `${p.kind}:${p.id}`;
  const client = res.locals.serviceClient as { id: number } | null | undefined;
  return client ? `service-client:${client.id}` : `ip:${clientIp(req)}`;
}
