/**
 * Access tokens: JWTs signed with Ed25519 (`alg` pinned to EdDSA), with issuer, audience, expiry and a key
 * id (`kid` = RFC 7638 thumbprint) so that keys can be rotated: the current key signs, previous public keys
 * still verify until their tokens expire (docs/decisions.md §6 identity).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, jwtVerify, SignJWT, decodeProtectedHeader, type JWK, type JWTPayload } from 'jose';
import { ApiError } from '@sports-timing/shared';
import { ROLES, USER_GROUPS, type Principal, type Role, type UserGroup } from './principal';

const ALG = 'EdDSA';

/** Options of {@link TokenService.create}. */
export interface TokenServiceOptions {
  /** Ed25519 private key, PKCS#8 PEM. */
  privateKeyPem: string;
  /** Previous public keys (SPKI PEM blocks, concatenated) still accepted. */
  previousPublicKeysPem?: string;
  issuer: string;
  audience: string;
  /** Access-token lifetime, seconds. */
  ttlSeconds: number;
}

/**
 * The verified claims of an access token (what `dev/get-user-claims` shows). `sub` is the user id, or
 * `client:<client_id>` for service clients; `iat`/`exp` are seconds since the epoch.
 */
export interface AccessTokenClaims {
  sub: string;
  iss: string;
  aud: string;
  iat: number;
  exp: number;
  jti?: string;
  preferred_username?: string;
  email?: string;
  roles: Role[];
  user_group: UserGroup;
  retailer: string | null;
  client_id?: string;
  scope?: string;
  /** Users: the token version the token was issued at (see `AccessCheck`). */
  ver?: number;
}

/** A new Ed25519 private key as PKCS#8 PEM (for development keys and tests). */
export function generateSigningKeyPem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

function splitPem(pem: string | undefined): string[] {
  return (pem ?? '').match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? [];
}

/** Issues and verifies access tokens. */
export class TokenService {
  private constructor(
    private readonly signingKey: KeyObject,
    private readonly kid: string,
    private readonly verificationKeys: Map<string, KeyObject>,
    private readonly jwks: JWK[],
    private readonly opts: TokenServiceOptions,
  ) {}

  /** Loads the keys; throws on a key that is not Ed25519. */
  static async create(opts: TokenServiceOptions): Promise<TokenService> {
    const signingKey = createPrivateKey(opts.privateKeyPem);
    if (signingKey.asymmetricKeyType !== 'ed25519') throw new Error('JWT_PRIVATE_KEY must be an Ed25519 key (PKCS#8 PEM)');
    const publicKeys = [createPublicKey(signingKey), ...splitPem(opts.previousPublicKeysPem).map((p) => createPublicKey(p))];
    const verificationKeys = new Map<string, KeyObject>();
    const jwks: JWK[] = [];
    for (const key of publicKeys) {
      const jwk = await exportJWK(key);
      const kid = await calculateJwkThumbprint(jwk);
      verificationKeys.set(kid, key);
      jwks.push({ ...jwk, kid, alg: ALG, use: 'sig' });
    }
    return new TokenService(signingKey, jwks[0].kid!, verificationKeys, jwks, opts);
  }

  /** The public keys as a JWK set (for offline verification by other services). */
  get jwkSet(): { keys: JWK[] } {
    return { keys: this.jwks };
  }

  /** Lifetime of issued access tokens, seconds. */
  get ttlSeconds(): number {
    return this.opts.ttlSeconds;
  }

  /**
   * Signs an access token for the principal; `extra` claims are added (`scope`, `email`). Users get
   * `sub` = their id; service clients get `sub` = `client:<client_id>` (their `name`) and `cid` = their
   * numeric id, so user and client subjects never collide.
   */
  async issue(p: Principal, extra: Record<string, unknown> = {}): Promise<string> {
    const isClient = p.kind === 'client';
    return new SignJWT({
      ...extra,
      kind: p.kind,
      preferred_username: p.name,
      roles: p.roles,
      user_group: p.userGroup,
      retailer: p.erpRetailerEntityId,
      ...(isClient ? { cid: p.id, client_id: p.name } : { ver: p.tokenVersion ?? 0 }),
    })
      .setProtectedHeader({ alg: ALG, kid: this.kid, typ: 'at+jwt' })
      .setSubject(isClient ? `client:${p.name}` : String(p.id))
      .setJti(randomUUID())
      .setIssuer(this.opts.issuer)
      .setAudience(this.opts.audience)
      .setIssuedAt()
      .setExpirationTime(`${this.opts.ttlSeconds}s`)
      .sign(this.signingKey);
  }

  /** Verifies a token and returns its principal; throws ApiError 401 on any defect. */
  async verify(token: string): Promise<Principal> {
    return (await this.verifyClaims(token)).principal;
  }

  /**
   * Verifies a token (EdDSA only, issuer, audience, `typ` at+jwt, known `kid`; `exp`, `iat` and `sub`
   * required, `exp` in the future) and returns its principal and claims; throws ApiError 401
   * (`WWW-Authenticate: Bearer error="invalid_token"`) on any defect. Whether the subject exists and is
   * active is checked per request by `AccessCheck`.
   */
  async verifyClaims(token: string): Promise<{ principal: Principal; claims: AccessTokenClaims }> {
    const unauthorized = (why: string) => new ApiError(401, why, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw unauthorized('The access token is malformed.');
    }
    const key = kid ? this.verificationKeys.get(kid) : undefined;
    if (!key) throw unauthorized('The access token was signed by an unknown key.');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [ALG],
        issuer: this.opts.issuer,
        audience: this.opts.audience,
        typ: 'at+jwt',
        requiredClaims: ['exp', 'iat', 'sub'],
      }));
    } catch {
      throw unauthorized('The access token is invalid or expired.');
    }
    const kind = payload.kind === 'client' ? 'client' : 'user';
    const id = kind === 'client' ? Number(payload.cid) : Number(payload.sub);
    const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is Role => (ROLES as readonly string[]).includes(String(r))) : [];
    const group = String(payload.user_group);
    const ver = payload.ver === undefined ? 0 : Number(payload.ver);
    if (!Number.isInteger(id) || !Number.isInteger(ver) || !(USER_GROUPS as readonly string[]).includes(group) || typeof payload.sub !== 'string') {
      throw unauthorized('The access token is invalid or expired.');
    }
    const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
    const principal: Principal = {
      kind,
      id,
      name: str(payload.preferred_username) ?? '',
      roles,
      userGroup: group as UserGroup,
      erpRetailerEntityId: typeof payload.retailer === 'string' ? payload.retailer : null,
      ...(kind === 'user' ? { tokenVersion: ver } : {}),
    };
    const claims: AccessTokenClaims = {
      sub: payload.sub,
      iss: String(payload.iss),
      aud: Array.isArray(payload.aud) ? payload.aud.join(' ') : String(payload.aud),
      iat: Number(payload.iat),
      exp: Number(payload.exp),
      jti: str(payload.jti),
      preferred_username: str(payload.preferred_username),
      email: str(payload.email),
      roles,
      user_group: principal.userGroup,
      retailer: principal.erpRetailerEntityId,
      client_id: str(payload.client_id),
      scope: str(payload.scope),
      ...(kind === 'user' ? { ver } : {}),
    };
    return { principal, claims };
  }
}
