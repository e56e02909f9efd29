/**
 * The maintenance gate (`enableMaintenanceMode`, docs/decisions.md §6): while maintenance mode is on, operations of the
 * gated spec tags answer 503 with `Retry-After` (google.rpc.Status UNAVAILABLE 14 under
 * `/api/grpc-json/v1/shop`, problem+json elsewhere); everything else keeps working.
 *
 * The decision is made from the operation's tags in the spec (`operationOf(req).tags`), so a new shop or
 * card-reservation operation is gated without touching this file and the list cannot drift from the spec.
 * Gated: `shop` (the public shop) and `card-reservation` (the card order page, including `POST /order`).
 * Not gated: administration (`maintenance`, `users`, `licensing`, `dev`), `auth`, `health`, `version`,
 * `callbacks` (payment and ERP webhooks must be accepted so nothing is lost), `utils`, `retailers`, and
 * `battery` (a read-only public lookup of imported battery dates that does not depend on the catalogue or
 * on orders, used by timing software in the field).
 *
 * Mounted in `app.ts` right after access control and before body parsing and validation: a caller without
 * rights still gets 401/403, and during maintenance no request body is read.
 */
import type { RequestHandler } from 'express';
import { ApiError, GrpcCode, operationOf } from '@sports-timing/shared';
import type { OrderingConfig } from '../config';
import type { MaintenanceMode } from './maintenance.service';

/** Spec tags whose operations answer 503 while maintenance mode is on. @internal */
export const MAINTENANCE_GATED_TAGS: readonly string[] = ['shop', 'card-reservation'];

/** Whether an operation (by its spec tags) is closed during maintenance. */
function isGatedByMaintenance(tags: readonly unknown[] | undefined): boolean {
  return !!tags && tags.some((t) => MAINTENANCE_GATED_TAGS.includes(String(t)));
}

/** The gate middleware over the instance's shared flag `maintenance` (built by the composition root). */
export function maintenanceGate(deps: { config: Pick<OrderingConfig, 'maintenanceRetryAfterSeconds'>; maintenance: MaintenanceMode }): RequestHandler {
  const mode = deps.maintenance;
  const retryAfter = String(deps.config.maintenanceRetryAfterSeconds);
  return async (req, _res, next) => {
    const tags = operationOf(req)?.tags;
    if (!isGatedByMaintenance(Array.isArray(tags) ? tags : undefined)) return next();
    try {
      if (!(await mode.isOn())) return next();
      next(new ApiError(503, 'The service is in maintenance mode; retry later.', { grpcCode: GrpcCode.UNAVAILABLE, headers: { 'Retry-After': retryAfter } }));
    } catch (err) {
      next(err);
    }
  };
}
