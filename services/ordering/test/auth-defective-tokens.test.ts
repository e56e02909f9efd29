/**
 * Defective access tokens are refused with 401 (`bearerAuth`): expired, another audience or
 * issuer, forged under the right kid, tampered, `alg: none`, algorithm confusion, garbage; a well-formed token
 * is the control. The token endpoint's grants are in auth.test.ts.
 */
import { generateKeyPairSync, createHmac } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK } from 'jose';
import request from 'supertest';
import { generateSigningKeyPem, TokenService } from '../src/auth/tokens';
import { startIdentity, type IdentityTestContext } from './support/identity';

describe('defective access tokens are refused with 401', () => {
  const privateKeyPem = generateSigningKeyPem();
  let sign: (claims: Record<string, unknown>, opts?: { exp?: string | number; aud?: string; iss?: string; alg?: string }) => Promise<string>;
  let tctx: IdentityTestContext;
  beforeAll(async () => {
    tctx = await startIdentity();
    const tokens = await TokenService.create({ privateKeyPem, issuer: tctx.deps.config.jwtIssuer, audience: tctx.deps.config.jwtAudience, ttlSeconds: 900 });
    // An app whose token service uses a key this test also holds, so it can mint defective tokens.
    const { createApp } = await import('../src/app');
    const { composeOrdering } = await import('../src/composition');
    tctx.app = createApp(composeOrdering({ ...tctx.deps, tokens }));
    tctx.deps = { ...tctx.deps, tokens };
    const { createPrivateKey, createPublicKey } = await import('node:crypto');
    const key = createPrivateKey(privateKeyPem);
    const kid = await calculateJwkThumbprint(await exportJWK(createPublicKey(key)));
    sign = (claims, opts = {}) =>
      new SignJWT({ kind: 'user', roles: ['admin'], user_group: 'internal', ...claims })
        .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'at+jwt' })
        .setSubject('1')
        .setIssuer(opts.iss ?? tctx.deps.config.jwtIssuer)
        .setAudience(opts.aud ?? tctx.deps.config.jwtAudience)
        .setIssuedAt()
        .setExpirationTime(opts.exp ?? '10m')
        .sign(key);
  });
  afterAll(async () => tctx.close());

  const call = (token: string) => request(tctx.app).get('/api/rest/v1/users').set('authorization', `Bearer ${token}`);

  it('accepts a well-formed token (control)', async () => {
    await call(await sign({})).expect(200);
  });
  it('expired', async () => {
    const res = await call(await sign({}, { exp: Math.floor(Date.now() / 1000) - 60 })).expect(401);
    expect(res.headers['www-authenticate']).toMatch(/invalid_token/);
  });
  it('wrong audience', async () => {
    await call(await sign({}, { aud: 'urn:somebody-else' })).expect(401);
  });
  it('wrong issuer', async () => {
    await call(await sign({}, { iss: 'urn:evil' })).expect(401);
  });
  it('forged: signed by another key under the right kid', async () => {
    const good = await sign({});
    const other = generateKeyPairSync('ed25519').privateKey;
    const [h] = good.split('.');
    const forged = await new SignJWT({ kind: 'user', roles: ['admin'], user_group: 'internal' })
      .setProtectedHeader(JSON.parse(Buffer.from(h, 'base64url').toString()))
      .setSubject('1')
      .setIssuer(tctx.deps.config.jwtIssuer)
      .setAudience(tctx.deps.config.jwtAudience)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(other);
    await call(forged).expect(401);
  });
  it('tampered payload (roles raised)', async () => {
    const [h, , s] = (await sign({ roles: ['customer'], user_group: 'public' })).split('.');
    const body = Buffer.from(
      JSON.stringify({
        kind: 'user',
        roles: ['admin'],
        user_group: 'internal',
        sub: '1',
        iss: tctx.deps.config.jwtIssuer,
        aud: tctx.deps.config.jwtAudience,
        exp: 9999999999,
      }),
    ).toString('base64url');
    await call(`${h}.${body}.${s}`).expect(401);
  });
  it('alg none', async () => {
    const [h, p] = (await sign({})).split('.');
    const header = { ...JSON.parse(Buffer.from(h, 'base64url').toString()), alg: 'none' };
    await call(`${Buffer.from(JSON.stringify(header)).toString('base64url')}.${p}.`).expect(401);
  });
  it('HS256 signed with the public key as HMAC secret (algorithm confusion)', async () => {
    const [h, p] = (await sign({})).split('.');
    const header = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(h, 'base64url').toString()), alg: 'HS256' })).toString('base64url');
    const { createPublicKey } = await import('node:crypto');
    const pub = createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' });
    const mac = createHmac('sha256', pub).update(`${header}.${p}`).digest('base64url');
    await call(`${header}.${p}.${mac}`).expect(401);
  });
  it('garbage and other schemes', async () => {
    await call('not-a-jwt').expect(401);
    await request(tctx.app).get('/api/rest/v1/users').set('authorization', 'Basic YWRtaW46YWRtaW4=').expect(401);
  });
});
