/**
 * Handlers of the auth operations (`issueToken`, `getUserinfo`): the OAuth 2.0 token endpoint and userinfo. The
 * token endpoint's errors are RFC 6749 §5.2 bodies, rendered by {@link tokenEndpointErrorHandler}.
 */
import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { enumValues, normalizeError, principalOf, type Handlers } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import type { OrderingContext } from '../composition';
import type { components, operations } from '../generated/openapi';
import { OAuthError, type ClientCredentials } from '../identity/auth.service';

/** The grant types `issueToken` supports (spec `TokenRequest.grant_type`). */
const GRANT_TYPES = enumValues<components['schemas']['TokenRequest']['grant_type']>({ password: true, client_credentials: true, refresh_token: true });

/**
 * Client credentials of an `Authorization: Basic` header (RFC 6749 §2.3.1: id and secret each
 * form-urlencoded, then joined by `:`). Null without a Basic header; OAuthError `invalid_client` when
 * the header is malformed.
 */
function basicCredentials(header: string | undefined): ClientCredentials | null {
  const m = header ? /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header) : null;
  if (!header || !/^Basic\s/i.test(header)) return null;
  const decoded = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw new OAuthError('invalid_client', 'Client authentication failed.');
  try {
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: unform(decoded.slice(0, colon)), clientSecret: unform(decoded.slice(colon + 1)) };
  } catch {
    throw new OAuthError('invalid_client', 'Client authentication failed.');
  }
}

/** auth handlers. */
export function authHandlers(ctx: OrderingContext): Handlers<operations> {
  const identity = ctx.services.identity;
  return {
    async issueToken(req, res) {
      const reply = await identity.auth.grant(req.body, basicCredentials(req.headers.authorization), req.ip ?? '');
      res.set('Cache-Control', 'no-store').set('Pragma', 'no-cache').json(reply);
    },
    async getUserinfo(_req, res) {
      res.json(await identity.auth.userinfo(principalOf<Principal>(res)!));
    },
  };
}

/**
 * Error middleware of the token endpoint, mounted before the problem handler: OAuthErrors and every 400
 * (including the validator's and the JSON parser's) become RFC 6749 §5.2 bodies; an unknown `grant_type`
 * is `unsupported_grant_type`. Other statuses (413, 415, 429, 503) stay problem+json as the spec states.
 * Every answer of the endpoint carries `Cache-Control: no-store` and `Pragma: no-cache`.
 */
export function tokenEndpointErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    res.set('Cache-Control', 'no-store').set('Pragma', 'no-cache');
    let error: OAuthError | undefined;
    if (err instanceof OAuthError) error = err;
    else {
      const n = normalizeError(err);
      if (n.status === 400) {
        const grant = (req.body as { grant_type?: unknown } | undefined)?.grant_type;
        const unsupported = typeof grant === 'string' && grant !== '' && !(GRANT_TYPES as readonly string[]).includes(grant);
        error = unsupported
          ? new OAuthError('unsupported_grant_type', 'The grant type is not supported.')
          : new OAuthError('invalid_request', n.detail ?? 'The request is malformed.');
      }
    }
    if (!error) return next(err);
    ((res as { log?: Logger }).log ?? logger).debug({ status: error.status, error: error.code }, 'token request rejected');
    res.status(error.status).set(error.headers).json({ error: error.code, error_description: error.description });
  };
}
