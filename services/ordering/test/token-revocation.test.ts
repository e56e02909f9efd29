/**
 * Access tokens stop working the moment the user behind them changes: a demoted admin cannot restore the
 * role with the token issued before the demotion, and a deactivation or a password change refuses older
 * tokens at once on every instance. Tokens without `exp`, `iat` or `sub`, or naming a user that does not
 * exist, are refused.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK } from 'jose';
import request from 'supertest';
import { createApp } from '../src/app';
import { composeOrdering } from '../src/composition';
import { generateSigningKeyPem, TokenService } from '../src/auth/tokens';
import { ADMIN_PASSWORD, bearerOf, createUser, startIdentity, type IdentityTestContext } from './support/identity';

const PW = 'revocation-password-1';
const ROLES = '/api/rest/v1/users/update-roles';
let ctx: IdentityTestContext;
let admin: string;

beforeAll(async () => {
  ctx = await startIdentity();
  admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
});
afterAll(async () => ctx.close());

describe('role, password and active-flag changes take effect at once', () => {
  it('a demoted admin cannot restore the role with the token issued before the demotion', async () => {
    const deputy = await createUser(ctx.app, admin, { userName: 'deputy', email: 'deputy@example.com', password: PW, roles: ['admin'] });
    const stale = await bearerOf(ctx.app, 'deputy', PW);
    await request(ctx.app).get('/api/rest/v1/users').set('authorization', stale).expect(200);
    await request(ctx.app)
      .post(ROLES)
      .set('authorization', admin)
      .send({ id: deputy.id, roles: ['customer'] })
      .expect(200);
    // The attack: restore the role with the old token.
    const res = await request(ctx.app)
      .post(ROLES)
      .set('authorization', stale)
      .send({ id: deputy.id, roles: ['admin'] })
      .expect(401);
    expect(res.headers['www-authenticate']).toContain('invalid_token');
    await request(ctx.app).get('/api/rest/v1/users').set('authorization', stale).expect(401);
    const stored = (await request(ctx.app).get(`/api/rest/v1/users/${deputy.id}`).set('authorization', admin).expect(200)).body;
    expect(stored.roles).toEqual(['customer']);
    // A new login carries the new role.
    const fresh = await bearerOf(ctx.app, 'deputy', PW);
    await request(ctx.app)
      .post(ROLES)
      .set('authorization', fresh)
      .send({ id: deputy.id, roles: ['admin'] })
      .expect(403);
  });

  it('a deactivation and a password change refuse older tokens at once on another instance too', async () => {
    const other = createApp(composeOrdering({ ...ctx.deps })); // a second instance: its own identity services and caches
    const user = await createUser(ctx.app, admin, { userName: 'roamer', email: 'roamer@example.com', password: PW });
    const token = await bearerOf(ctx.app, 'roamer', PW);
    await request(other).get('/api/rest/v1/auth/userinfo').set('authorization', token).expect(200);
    await request(ctx.app)
      .post(ROLES)
      .set('authorization', admin)
      .send({ id: user.id, roles: ['customer'], isActive: false })
      .expect(200);
    await request(other).get('/api/rest/v1/auth/userinfo').set('authorization', token).expect(401);
    await request(ctx.app)
      .post(ROLES)
      .set('authorization', admin)
      .send({ id: user.id, roles: ['customer'], isActive: true })
      .expect(200);
    await request(other).get('/api/rest/v1/auth/userinfo').set('authorization', token).expect(401);

    const again = await bearerOf(ctx.app, 'roamer', PW);
    await request(other).get('/api/rest/v1/auth/userinfo').set('authorization', again).expect(200);
    await request(ctx.app)
      .post('/api/rest/v1/users/update-profile')
      .set('authorization', again)
      .send({ currentPassword: PW, newPassword: 'roamer-new-password-1' })
      .expect(200);
    await request(other).get('/api/rest/v1/auth/userinfo').set('authorization', again).expect(401);
    await request(other)
      .get('/api/rest/v1/auth/userinfo')
      .set('authorization', await bearerOf(ctx.app, 'roamer', 'roamer-new-password-1'))
      .expect(200);
  });
});

describe('required claims', () => {
  const privateKeyPem = generateSigningKeyPem();
  let app: ReturnType<typeof createApp>;
  let sign: (omit: Array<'exp' | 'iat' | 'sub'>, sub?: string) => Promise<string>;
  beforeAll(async () => {
    const tokens = await TokenService.create({ privateKeyPem, issuer: ctx.deps.config.jwtIssuer, audience: ctx.deps.config.jwtAudience, ttlSeconds: 900 });
    app = createApp(composeOrdering({ ...ctx.deps, tokens }));
    const key = createPrivateKey(privateKeyPem);
    const kid = await calculateJwkThumbprint(await exportJWK(createPublicKey(key)));
    sign = (omit, sub = '1') => {
      let jwt = new SignJWT({ kind: 'user', roles: ['admin'], user_group: 'internal', ver: 0 })
        .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'at+jwt' })
        .setIssuer(ctx.deps.config.jwtIssuer)
        .setAudience(ctx.deps.config.jwtAudience);
      if (!omit.includes('sub')) jwt = jwt.setSubject(sub);
      if (!omit.includes('iat')) jwt = jwt.setIssuedAt();
      if (!omit.includes('exp')) jwt = jwt.setExpirationTime('10m');
      return jwt.sign(key);
    };
  });
  const call = (token: string) => request(app).get('/api/rest/v1/users').set('authorization', `Bearer ${token}`);

  it('accepts a complete token of the existing admin (control)', async () => {
    await call(await sign([])).expect(200);
  });
  it.each([['exp'], ['iat'], ['sub']] as const)('refuses a token without %s', async (claim) => {
    const res = await call(await sign([claim])).expect(401);
    expect(res.headers['www-authenticate']).toContain('invalid_token');
  });
  it('refuses a token whose subject does not exist', async () => {
    await call(await sign([], '999999')).expect(401);
  });
});
