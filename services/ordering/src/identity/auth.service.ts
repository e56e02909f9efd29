/**
 * The OAuth 2.0 token endpoint's logic (`issueToken`, `getUserinfo`, RFC 6749): password, client-credentials and
 * rotating refresh-token grants, and the OpenID-style claims of `userinfo`. Errors are {@link OAuthError}s,
 * rendered as RFC 6749 §5.2 bodies by the token endpoint's error middleware.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '@sports-timing/shared';
import type { Kysely } from 'kysely';
import { ApiError } from '@sports-timing/shared';
import type { Principal, Role, UserGroup } from '../auth/principal';
import type { TokenService } from '../auth/tokens';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { hashingBusy, type HashGate } from './hash-gate';
import { accountKeyOf, type LoginLimiter } from './login-limits';
import { verifyPassword } from './passwords';
import * as refreshRepo from './refresh-tokens.repository';
import { hexDigestsEqual, randomSecret, sha256Hex } from './secrets';
import { findServiceClientByClientId, findServiceClientById } from './service-clients.repository';
import { findUserById, findUserByLogin, touchLastLogin, type UserRow } from './users.repository';
import { principalOfUser } from './users.service';

/** RFC 6749 §5.2 error codes used by this endpoint. */
export type OAuthErrorCode = components['schemas']['OAuthError']['error'];

/** An RFC 6749 §5.2 error: 400, or 401 for `invalid_client` (with a `WWW-Authenticate` challenge). */
export class OAuthError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
    this.name = 'OAuthError';
    this.status = code === 'invalid_client' ? 401 : 400;
    this.headers = code === 'invalid_client' ? { 'WWW-Authenticate': 'Basic realm="ordering", charset="UTF-8"' } : {};
  }
}

/** `TokenRequest` of the spec. */
export type TokenRequest = components['schemas']['TokenRequest'];
/** `TokenResponse` of the spec. */
export type TokenResponse = components['schemas']['TokenResponse'];
/** `UserInfo` of the spec. */
export type UserInfo = components['schemas']['UserInfo'];

/** Scopes a client may ask for; informational (roles decide access). */
const KNOWN_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

/** Lifetime of refresh tokens: 30 days. */
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/** Client credentials taken from the body or an HTTP Basic header (RFC 6749 §2.3.1). */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

const BAD_LOGIN = 'The user name or password is incorrect.';

function normalizeScope(scope: string | undefined): string | null {
  if (scope === undefined) return null;
  const parts = [...new Set(scope.split(' ').filter(Boolean))];
  const unknown = parts.filter((p) => !(KNOWN_SCOPES as readonly string[]).includes(p));
  if (unknown.length) throw new OAuthError('invalid_scope', `Unknown scope: ${unknown.join(' ')}.`);
  return parts.length ? parts.join(' ') : null;
}

/** Token grants and claims. */
export class AuthService {
  constructor(
    private readonly database: Database<DB>,
    private readonly tokens: TokenService,
    private readonly limiter: LoginLimiter,
    private readonly hashing: HashGate,
  ) {}

  /**
   * Handles one token request. `basic` are credentials of an `Authorization: Basic` header, `ip` the
   * caller's address (rate limits). Throws OAuthError, ApiError 429 when a login limit is reached, or
   * ApiError 503 (`Retry-After`) when password hashing is at capacity (the attempt is not counted then).
   */
  async grant(req: TokenRequest, basic: ClientCredentials | null, ip: string): Promise<TokenResponse> {
    switch (req.grant_type) {
      case 'password':
        return this.passwordGrant(req, ip);
      case 'client_credentials':
        return this.clientCredentialsGrant(req, basic, ip);
      case 'refresh_token':
        return this.refreshTokenGrant(req);
      default:
        throw new OAuthError('unsupported_grant_type', 'The grant type is not supported.');
    }
  }

  private async passwordGrant(req: TokenRequest, ip: string): Promise<TokenResponse> {
    if (!req.username || req.password === undefined) throw new OAuthError('invalid_request', 'username and password are required.');
    const scope = normalizeScope(req.scope);
    const login = req.username;
    // Refused before any database or counter work, so a burst beyond capacity costs next to nothing.
    if (this.hashing.saturated) throw hashingBusy();
    const user = await findUserByLogin(this.database.db, login);
    const attempt = await this.limiter.reserve(accountKeyOf(user?.id, login), ip);
    let ok: boolean;
    try {
      // Always one full hash: an unknown user costs what a wrong password costs.
      ok = await this.hashing.run(() => verifyPassword(req.password!, user?.password_hash ?? null));
    } catch (err) {
      await attempt.release();
      throw err;
    }
    if (!user || !ok) {
      attempt.failed();
      throw new OAuthError('invalid_grant', BAD_LOGIN);
    }
    await attempt.succeeded();
    if (!user.is_active) throw new OAuthError('invalid_grant', 'The account is deactivated.');
    await touchLastLogin(this.database.db, user.id);
    return this.issueForUser(user, scope, randomUUID());
  }

  private async clientCredentialsGrant(req: TokenRequest, basic: ClientCredentials | null, ip: string): Promise<TokenResponse> {
    const inBody = req.client_id !== undefined || req.client_secret !== undefined;
    if (basic && inBody) throw new OAuthError('invalid_request', 'Use one client authentication method, not two.');
    const creds =
      basic ?? (req.client_id !== undefined && req.client_secret !== undefined ? { clientId: req.client_id, clientSecret: req.client_secret } : null);
    if (!creds) throw new OAuthError('invalid_client', 'Client authentication failed.');
    const scope = normalizeScope(req.scope);
    const attempt = await this.limiter.reserve(`client:${creds.clientId}`, ip);
    const client = await findServiceClientByClientId(this.database.db, creds.clientId);
    const presented = sha256Hex(creds.clientSecret);
    if (!client || !hexDigestsEqual(presented, client.secret_hash) || !client.is_active) {
      attempt.failed();
      throw new OAuthError('invalid_client', 'Client authentication failed.');
    }
    await attempt.succeeded();
    const principal: Principal = {
      kind: 'client',
      id: client.id,
      name: client.client_id,
      roles: client.roles as Role[],
      userGroup: client.user_group as UserGroup,
      erpRetailerEntityId: null,
    };
    const accessToken = await this.tokens.issue(principal, scope ? { scope } : {});
    return { access_token: accessToken, token_type: 'Bearer', expires_in: this.tokens.ttlSeconds, ...(scope ? { scope } : {}) };
  }

  /**
   * Rotates a refresh token: the presented token is spent by a conditional update (so two concurrent
   * uses cannot both succeed) and a successor of the same family is issued. A token that was already
   * spent is a replay, so the whole family is revoked (RFC 6819 §5.2.2.3; OAuth 2.0 Security BCP §4.14).
   */
  private async refreshTokenGrant(req: TokenRequest): Promise<TokenResponse> {
    if (!req.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required.');
    const db = this.database.db;
    const hash = sha256Hex(req.refresh_token);
    const invalid = new OAuthError('invalid_grant', 'The refresh token is invalid, expired or revoked.');
    // Spending and issuing the successor share one transaction: a concurrent replay's conditional update
    // waits for the spent row's lock, so when it then revokes the family the successor is already there.
    const issued = await db.transaction().execute(async (trx) => {
      const spent = await refreshRepo.spendRefreshToken(trx, hash);
      if (!spent) return null;
      const user = await findUserById(trx, spent.user_id);
      if (!user || !user.is_active) {
        await refreshRepo.revokeFamily(trx, spent.family_id);
        return 'inactive' as const;
      }
      return this.issueForUser(user, spent.scope, spent.family_id, trx);
    });
    if (issued === 'inactive') throw invalid;
    if (issued) return issued;
    const known = await refreshRepo.findRefreshToken(db, hash);
    if (known?.used_at) await refreshRepo.revokeFamily(db, known.family_id);
    throw invalid;
  }

  private async issueForUser(user: UserRow, scope: string | null, familyId: string, db: Kysely<DB> = this.database.db): Promise<TokenResponse> {
    const accessToken = await this.tokens.issue(principalOfUser(user), { email: user.email, ...(scope ? { scope } : {}) });
    const refreshToken = randomSecret('rt_');
    await refreshRepo.insertRefreshToken(db, {
      tokenHash: sha256Hex(refreshToken),
      familyId,
      userId: user.id,
      scope,
      expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL_SECONDS * 1000),
    });
    return { access_token: accessToken, token_type: 'Bearer', expires_in: this.tokens.ttlSeconds, refresh_token: refreshToken, ...(scope ? { scope } : {}) };
  }

  /**
   * OpenID-style claims of the caller from the current user (or client) record, so role changes since
   * the token was issued show. 401 when the record is gone.
   */
  async userinfo(p: Principal): Promise<UserInfo> {
    if (p.kind === 'client') {
      const client = await findServiceClientById(this.database.db, p.id);
      if (!client) throw new ApiError(401, 'The token subject no longer exists.', { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
      return {
        sub: `client:${client.client_id}`,
        preferred_username: client.client_id,
        name: client.name,
        roles: client.roles as Role[],
        user_group: client.user_group as UserGroup,
        retailer: null,
      };
    }
    const user = await findUserById(this.database.db, p.id);
    if (!user) throw new ApiError(401, 'The token subject no longer exists.', { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
    const name = [user.first_name, user.last_name].filter(Boolean).join(' ');
    return {
      sub: String(user.id),
      preferred_username: user.user_name,
      email: user.email,
      email_verified: user.email_verified,
      ...(name ? { name } : {}),
      ...(user.first_name ? { given_name: user.first_name } : {}),
      ...(user.last_name ? { family_name: user.last_name } : {}),
      locale: user.culture,
      roles: user.roles as Role[],
      user_group: user.user_group as UserGroup,
      retailer: user.erp_retailer_entity_id,
    };
  }
}
