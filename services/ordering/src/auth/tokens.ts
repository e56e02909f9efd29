/**
 * Access tokens: JWTs signed with Ed25519 (`alg` pinned to EdDSA), with issuer, audience, expiry and a key
 * id (`kid` = RFC 7638 thumbprint) so that keys can be rotated: the current key signs, previous public keys
 * still verify until their tokens expire (DESIGN §6 identity).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, jwtVerify, SignJWT, decodeProtectedHeader, type JWK } from 'jose';
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

  /** Signs an access token for the principal; `extra` claims are added (e.g. `scope`). */
  async issue(p: Principal, extra: Record<string, unknown> = {}): Promise<string> {
    return new SignJWT({
      ...extra,
      kind: p.kind,
      preferred_username: p.name,
      roles: p.roles,
      user_group: p.userGroup,
      retailer: p.erpRetailerEntityId,
    })
      .setProtectedHeader({ alg: ALG, kid: this.kid, typ: 'at+jwt' })
      .setSubject(String(p.id))
      .setIssuer(this.opts.issuer)
      .setAudience(this.opts.audience)
      .setIssuedAt()
      .setExpirationTime(`${this.opts.ttlSeconds}s`)
      .sign(this.signingKey);
  }

  /** Verifies a token and returns its principal; throws ApiError 401 on any defect. */
  async verify(token: string): Promise<Principal> {
    const unauthorized = (why: string) => new ApiError(401, why, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw unauthorized('The access token is malformed.');
    }
    const key = kid ? this.verificationKeys.get(kid) : undefined;
    if (!key) throw unauthorized('The access token was signed by an unknown key.');
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: [ALG], issuer: this.opts.issuer, audience: this.opts.audience, typ: 'at+jwt' });
      const id = Number(payload.sub);
      const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is Role => (ROLES as readonly string[]).includes(String(r))) : [];
      const group = String(payload.user_group);
      if (!Number.isInteger(id) || !(USER_GROUPS as readonly string[]).includes(group)) throw new Error('claims');
      return {
        kind: payload.kind === 'client' ? 'client' : 'user',
        id,
        name: String(payload.preferred_username ?? ''),
        roles,
        userGroup: group as UserGroup,
        erpRetailerEntityId: typeof payload.retailer === 'string' ? payload.retailer : null,
      };
    } catch {
      throw unauthorized('The access token is invalid or expired.');
    }
  }
}
