/**
 * Request-time identity checks used by `app.ts`: refusing access tokens of missing or deactivated users
 * and clients and tokens issued before a user's last role or password change,
 * and recognising registered clients by `X-Service-Client-Id` (ordering spec "Authentication and roles").
 */
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ApiError, type Database } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import type { DB } from '../db/schema';
import { findServiceClientById } from './service-clients.repository';
import type { ServiceClientsService } from './service-clients.service';
import { userTokenState } from './users.repository';

/** How long a client's active flag is trusted without asking the database again (ms). */
const CLIENT_CACHE_MS = 5_000;
const CLIENT_CACHE_MAX = 50_000;

const refused = (detail: string) => new ApiError(401, detail, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });

/**
 * Whether the subject of a valid access token may still act. Users: the stored user is read on every
 * request (one primary-key lookup), so a deactivation, a role change or a password change (each raises
 * `token_version`, which tokens carry as `ver`) refuses the older tokens at once on every instance; a
 * token of a user that does not exist is refused too. Service clients: the active flag is cached for
 * {@link CLIENT_CACHE_MS}.
 */
export class AccessCheck {
  private readonly clients = new Map<number, { active: boolean; until: number }>();

  constructor(private readonly database: Database<DB>) {}

  /**
   * Throws ApiError 401 (`WWW-Authenticate: Bearer error="invalid_token"`) when the principal's user or
   * client is missing or deactivated, or the token predates the user's last role or password change.
   */
  async assertActive(p: Principal): Promise<void> {
    if (p.kind === 'user') {
      const state = await userTokenState(this.database.db, p.id);
      if (!state) throw refused('The token subject no longer exists.');
      if (!state.is_active) throw refused('The account is deactivated.');
      if (state.token_version !== (p.tokenVersion ?? 0)) throw refused('The access token was issued before a change of roles or password; log in again.');
      return;
    }
    const now = Date.now();
    let entry = this.clients.get(p.id);
    if (!entry || entry.until <= now) {
      const client = await findServiceClientById(this.database.db, p.id);
      entry = { active: client?.is_active === true, until: now + CLIENT_CACHE_MS };
      if (this.clients.size >= CLIENT_CACHE_MAX) this.clients.clear();
      this.clients.set(p.id, entry);
    }
    if (!entry.active) throw refused('The service client is unknown or deactivated.');
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
