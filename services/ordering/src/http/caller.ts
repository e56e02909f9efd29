/**
 * Who a request comes from, for per-caller rate limits and `Idempotency-Key` scopes (ordering spec parameter
 * `IdempotencyKey`, rate limits of `info.description` "Errors"): the authenticated principal, else the client
 * address. `X-Service-Client-Id` identifies a client but authenticates nothing (anyone who saw it can send it),
 * so it only names the budget beside the address, never replaces it: one leaked identifier must not pool
 * all of the client's callers into one counter that a single address can spend. An unregistered identifier is
 * ignored (it would let a caller pick a fresh counter or scope per request).
 */
import type { Request, Response } from 'express';
import { clientIp } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';

/**
 * `user:<id>` / `client:<id>` (principal; `client:` is an authenticated `client_credentials` client),
 * `service-client:<id>:ip:<address>` (registered client id header, per address) or `ip:<address>`.
 */
export function requestCaller(req: Request, res: Response): string {
  const p = res.locals.principal as Principal | null | undefined;
  if (p) return `${p.kind}:${p.id}`;
  const client = res.locals.serviceClient as { id: number } | null | undefined;
  return client ? `service-client:${client.id}:ip:${clientIp(req)}` : `ip:${clientIp(req)}`;
}
