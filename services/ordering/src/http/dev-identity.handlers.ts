/**
 * Handlers of the identity utilities under `/api/rest/v1/dev` (`devGetUserName`, `devGetUserClaims`): the caller's user
 * name and the verified claims of the caller's access token (never the token itself).
 */
import type { Request } from 'express';
import { ApiError, type Handlers } from '@sports-timing/shared';
import type { AccessTokenClaims } from '../auth/tokens';
import type { OrderingDeps } from '../context';
import type { operations } from '../generated/openapi';

/** dev handlers of the identity area. */
export function devIdentityHandlers(ctx: OrderingDeps): Handlers<operations> {
  // Access control already verified the token; verifying again yields the claims the principal omits.
  const claimsOf = async (req: Request): Promise<AccessTokenClaims> => {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!m) throw new ApiError(401, 'A valid bearer token is required.', { headers: { 'WWW-Authenticate': 'Bearer' } });
    return (await ctx.tokens.verifyClaims(m[1])).claims;
  };
  return {
    async devGetUserName(req, res) {
      const c = await claimsOf(req);
      res.json({ sub: c.sub, userName: c.client_id ?? c.preferred_username ?? c.sub });
    },
    async devGetUserClaims(req, res) {
      res.json(await claimsOf(req));
    },
  };
}
