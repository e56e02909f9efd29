/**
 * Request-time identity checks used by `app.ts`: refusing access tokens of deactivated users and clients,
 * and recognising registered clients by `X-Service-Client-Id` (ordering spec "Authentication and roles").
 */
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ApiError, type Database } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import type { DB } from '../db/schema';
import { findServiceClientById } from './service-clients.repository';
import type { ServiceClientsService } from './service-clients.service';
import { userIsActive } from './users.repository';

/** How long an active flag is trusted without asking the database again (ms). */
const ACTIVE_CACHE_MS = 5_000;
const ACTIVE_CACHE_MAX = 50_000;

/**
 * Whether the subject of a valid access token is still active. Users are never deleted, only deactivated:
 * a token of a deactivated user (or client) is refused at once on the instance that deactivated it (the
 * cache entry is dropped) and within {@link ACTIVE_CACHE_MS} on the others. A subject without a row (tokens
 * minted by tests for synthetic principals) is not refused here; handlers that need the row answer 404/401.
 */
export class AccessCheck {
  private readonly cache = new Map<string, { active: boolean; until: number }>();

  constructor(private readonly database: Database<DB>) {}

  /** Throws ApiError 401 when the principal's user or client is deactivated. */
  async assertActive(p: Principal): Promise<void> {
    const key = `${p.kind}:${p.id}`;
    const now = Date.now();
    let entry = this.cache.get(key);
    if (!entry || entry.until <= now) {
      const active = p.kind === 'user' ? await userIsActive(this.database.db, p.id) : (await findServiceClientById(this.database.db, p.id))?.is_active;
      entry = { active: active !== false, until: now + ACTIVE_CACHE_MS };
      if (this.cache.size >= ACTIVE_CACHE_MAX) this.cache.clear();
      this.cache.set(key, entry);
    }
    if (!entry.active) throw new ApiError(401, 'The account is deactivated.', { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
  }

  /** Forgets the cached flag of a user (after a change). */
  forgetUser(userId: number): void {
    this.cache.delete(`user:${userId}`);
  }
}

/** Header names carrying a service-client identifier; the first wins (ordering spec `LegacyServiceClientId`). */
export const SERVICE_CLIENT_HEADERS = ['x-service-client-id', 'x-sportident-client-id'] as const;

/**
 * Middleware: when a request carries `X-Service-Client-Id` (or the older `X-Sportident-Client-Id`), sets
 * `res.locals.serviceClient` to the registered client `{ id, name }` it designates, or null. An unknown
 * identifier, or a failed lookup, leaves the request anonymous: never an error.
 */
export function identifyServiceClient(clients: ServiceClientsService, logger: Logger): RequestHandler {
  return async (req, res, next) => {
    const raw = SERVICE_CLIENT_HEADERS.map((h) => req.headers[h]).find((v) => typeof v === 'string' && v.length > 0);
    res.locals.serviceClient = null;
    if (typeof raw === 'string' && raw.length <= 200) {
      try {
        res.locals.serviceClient = await clients.identify(raw);
      } catch (err) {
        logger.warn({ err: { message: (err as Error).message } }, 'service client lookup failed; treating the caller as anonymous');
      }
    }
    next();
  };
}
