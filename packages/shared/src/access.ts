/**
 * Spec-driven access control. Every operation of both specs carries `security` and an `x-roles`
 * extension: `["anonymous"]` (public; credentials still checked when sent), `["authenticated"]` (any
 * caller with valid credentials) or a list of roles. One middleware enforces it for every operation, so
 * the access matrix is the spec itself and a test can be generated from it.
 */
import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from './errors';
import { operationOf } from './openapi';

/** Anything with roles: a user of the ordering service, a key holder of the timing service. */
export interface HasRoles {
  roles: readonly string[];
}

/**
 * Authenticates a request from its credentials. Returns null when the request carries none; throws
 * ApiError 401 when it carries invalid ones.
 */
export type Authenticator<P extends HasRoles> = (req: Request) => Promise<P | null>;

/** The roles an operation allows (its `x-roles`); an operation without the extension is admin-only. */
function rolesOf(req: Request): string[] {
  const roles = operationOf(req)?.['x-roles'];
  return Array.isArray(roles) ? roles.map(String) : ['admin'];
}

/** The principal set by {@link enforceRoles}, or null for an anonymous caller. */
export function principalOf<P extends HasRoles>(res: Response): P | null {
  return (res.locals.principal as P | undefined) ?? null;
}

/**
 * Middleware: authenticates, stores the principal in `res.locals.principal`, then enforces `x-roles`:
 * anonymous allowed → pass; no credentials → 401 (with `WWW-Authenticate: <scheme>`); credentials without
 * an allowed role → 403.
 */
export function enforceRoles<P extends HasRoles>(
  authenticate: Authenticator<P>,
  scheme: string,
  /** The 401's detail for a request without credentials (how this service takes them); default `Authentication is required.` */
  missing: (req: Request) => string = () => 'Authentication is required.',
): RequestHandler {
  return async (req, res, next) => {
    try {
      const principal = await authenticate(req);
      res.locals.principal = principal;
      const allowed = rolesOf(req);
      if (allowed.includes('anonymous')) return next();
      if (!principal) throw new ApiError(401, missing(req), { headers: { 'WWW-Authenticate': scheme } });
      if (allowed.includes('authenticated') || principal.roles.some((r) => allowed.includes(r))) return next();
      throw new ApiError(403, 'You are not allowed to use this operation.');
    } catch (err) {
      next(err);
    }
  };
}
