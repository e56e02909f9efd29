/**
 * The OAuth 2.0 token endpoint (`issueToken`): password, client-credentials and refresh-token grants
 * (form and JSON), RFC 6749 §5.2 error bodies, rate limits, refresh rotation with reuse detection. The
 * refusal of defective access tokens is in auth-defective-tokens.test.ts.
 */
import request from 'supertest';
import { ADMIN_PASSWORD, bearerOf, createUser, login, startIdentity, type IdentityTestContext } from './support/identity';

const TOKEN = '/api/rest/v1/auth/token';
const CUSTOMER_PASSWORD = 'customer-password-1';

let ctx: IdentityTestContext;
let adminBearer: string;
beforeAll(async () => {
  ctx = await startIdentity({ LOGIN_MAX_FAILURES_PER_ACCOUNT: '3' });
  adminBearer = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
  await createUser(ctx.app, adminBearer, {
    userName: 'carla',
    email: 'carla@example.com',
    password: CUSTOMER_PASSWORD,
    firstName: 'Carla',
    lastName: 'Rossi',
    culture: 'it',
  });
});
afterAll(async () => ctx.close());

function expectNoStore(res: request.Response) {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers.pragma).toBe('no-cache');
}

describe('password grant', () => {
  it('issues a verifiable EdDSA access token and a refresh token for a form-encoded request', async () => {
    const res = await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'password', username: 'carla', password: CUSTOMER_PASSWORD }).expect(200);
    expectNoStore(res);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(res.body.refresh_token).toMatch(/^rt_/);
    const header = JSON.parse(Buffer.from(res.body.access_token.split('.')[0], 'base64url').toString());
    expect(header).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt' });
    expect(header.kid).toBeTruthy();
    const p = await ctx.deps.tokens.verify(res.body.access_token);
    expect(p).toMatchObject({ kind: 'user', name: 'carla', roles: ['customer'], userGroup: 'public' });
  });

  it('accepts JSON and the e-mail address as user name, and grants known scopes', async () => {
    const res = await request(ctx.app)
      .post(TOKEN)
      .send({ grant_type: 'password', username: 'CARLA@example.com', password: CUSTOMER_PASSWORD, scope: 'openid email' })
      .expect(200);
    expect(res.body.scope).toBe('openid email');
    const info = await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(info.body).toEqual({
      sub: expect.any(String),
      preferred_username: 'carla',
      email: 'carla@example.com',
      email_verified: false,
      name: 'Carla Rossi',
      given_name: 'Carla',
      family_name: 'Rossi',
      locale: 'it',
      roles: ['customer'],
      user_group: 'public',
      retailer: null,
    });
    const claims = await request(ctx.app).get('/api/rest/v1/dev/get-user-claims').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(claims.body).toMatchObject({
      sub: info.body.sub,
      iss: 'urn:sports-timing:ordering',
      aud: 'urn:sports-timing:api',
      roles: ['customer'],
      scope: 'openid email',
    });
    expect(claims.body.exp - claims.body.iat).toBe(900);
    expect(JSON.stringify(claims.body)).not.toContain(res.body.access_token);
    const name = await request(ctx.app).get('/api/rest/v1/dev/get-user-name').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(name.body).toEqual({ sub: info.body.sub, userName: 'carla' });
  });

  it('answers the same invalid_grant for an unknown user and a wrong password', async () => {
    const unknown = await request(ctx.app)
      .post(TOKEN)
      .type('form')
      .send({ grant_type: 'password', username: 'nobody-here', password: 'whatever-password' })
      .expect(400);
    const wrong = await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'password', username: 'admin', password: 'not-the-password' }).expect(400);
    expectNoStore(unknown);
    expect(unknown.headers['content-type']).toMatch(/^application\/json/);
    expect(unknown.body).toEqual({ error: 'invalid_grant', error_description: 'The user name or password is incorrect.' });
    expect(wrong.body).toEqual(unknown.body);
    // A successful login clears the account's failure counter.
    await login(ctx.app, 'admin', ADMIN_PASSWORD);
  });

  it('rejects scopes it does not know with invalid_scope', async () => {
    const res = await request(ctx.app)
      .post(TOKEN)
      .type('form')
      .send({ grant_type: 'password', username: 'carla', password: CUSTOMER_PASSWORD, scope: 'openid admin:all' })
      .expect(400);
    expect(res.body.error).toBe('invalid_scope');
  });
});

describe('RFC 6749 error bodies for malformed requests', () => {
  it.each([
    ['an unknown grant type', { grant_type: 'authorization_code', code: 'x' }, 'unsupported_grant_type'],
    ['another unknown grant type', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }, 'unsupported_grant_type'],
    ['a missing grant type', { username: 'carla', password: 'x' }, 'invalid_request'],
    ['an unknown field', { grant_type: 'password', username: 'carla', password: 'x', is_admin: 'true' }, 'invalid_request'],
    ['a password grant without password', { grant_type: 'password', username: 'carla' }, 'invalid_request'],
    ['a refresh grant without token', { grant_type: 'refresh_token' }, 'invalid_request'],
  ])('%s → 400 %s', async (_what, body, error) => {
    const res = await request(ctx.app).post(TOKEN).type('form').send(body).expect(400);
    expectNoStore(res);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
  });

  it('answers malformed JSON with invalid_request', async () => {
    const res = await request(ctx.app).post(TOKEN).set('content-type', 'application/json').send('{"grant_type":').expect(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('keeps 415 for an unsupported media type as a problem', async () => {
    const res = await request(ctx.app).post(TOKEN).set('content-type', 'text/xml').send('<x/>');
    expect(res.status).toBe(415);
    expectNoStore(res);
  });
});

describe('client credentials grant', () => {
  let clientId: string;
  let clientSecret: string;
  let identifier: string;
  beforeAll(async () => {
    const res = await request(ctx.app)
      .post('/api/rest/v1/users/service-clients')
      .set('authorization', adminBearer)
      .send({ name: 'Results sync', roles: ['support'] })
      .expect(200);
    ({ clientSecret, identifier } = res.body);
    clientId = res.body.client.clientId;
    expect(res.body.client).toMatchObject({ name: 'Results sync', roles: ['support'], userGroup: 'internal', hasIdentifier: true, isActive: true });
    const list = await request(ctx.app).get('/api/rest/v1/users/service-clients').set('authorization', adminBearer).expect(200);
    expect(JSON.stringify(list.body)).not.toContain(clientSecret);
    expect(JSON.stringify(list.body)).not.toContain(identifier);
  });

  it('issues a token for credentials in the body, without a refresh token', async () => {
    const res = await request(ctx.app)
      .post(TOKEN)
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret })
      .expect(200);
    expectNoStore(res);
    expect(res.body.refresh_token).toBeUndefined();
    const p = await ctx.deps.tokens.verify(res.body.access_token);
    expect(p).toMatchObject({ kind: 'client', name: clientId, roles: ['support'] });
    // A support client may use staff operations.
    await request(ctx.app).get('/api/rest/v1/users').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    const info = await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(info.body).toMatchObject({ sub: `client:${clientId}`, roles: ['support'] });
    const name = await request(ctx.app).get('/api/rest/v1/dev/get-user-name').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(name.body).toEqual({ sub: `client:${clientId}`, userName: clientId });
    // Service clients have no profile.
    await request(ctx.app)
      .post('/api/rest/v1/users/update-profile')
      .set('authorization', `Bearer ${res.body.access_token}`)
      .send({ firstName: 'x' })
      .expect(403);
  });

  it('accepts HTTP Basic client authentication', async () => {
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    await request(ctx.app).post(TOKEN).set('authorization', `Basic ${basic}`).type('form').send({ grant_type: 'client_credentials' }).expect(200);
  });

  it('answers 401 invalid_client with a challenge for a wrong secret or unknown client', async () => {
    for (const body of [
      { grant_type: 'client_credentials', client_id: clientId, client_secret: 'wrong' },
      { grant_type: 'client_credentials', client_id: 'sc_unknown', client_secret: clientSecret },
      { grant_type: 'client_credentials' },
    ]) {
      const res = await request(ctx.app).post(TOKEN).type('form').send(body).expect(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
      expectNoStore(res);
    }
  });

  it('recognises a registered X-Service-Client-Id and treats an unknown one as anonymous', async () => {
    const { identifyServiceClient } = await import('../src/identity/access');
    const mw = identifyServiceClient(ctx.services.identity.clients, ctx.deps.logger);
    const run = async (headers: Record<string, string>) => {
      const res = { locals: {} as Record<string, unknown> };
      await new Promise<void>((resolve) => mw({ headers } as never, res as never, () => resolve()));
      return res.locals.serviceClient;
    };
    expect(await run({ 'x-service-client-id': identifier })).toMatchObject({ name: 'Results sync' });
    expect(await run({ 'x-sportident-client-id': identifier })).toMatchObject({ name: 'Results sync' });
    expect(await run({ 'x-service-client-id': 'unknown-client' })).toBeNull();
    expect(await run({})).toBeNull();
    // Through the app: an unknown identifier is not an error on an anonymous operation.
    const res = await request(ctx.app).get('/api/grpc-json/v1/shop/countries').set('x-service-client-id', 'unknown-client');
    expect([401, 403, 400]).not.toContain(res.status);
  });
});

describe('refresh tokens', () => {
  it('rotate: a refresh token works once and its successor works', async () => {
    const first = await login(ctx.app, 'carla', CUSTOMER_PASSWORD);
    const second = await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: first.refresh_token }).expect(200);
    expectNoStore(second);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    await request(ctx.app).post(TOKEN).send({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token }).expect(200);
  });

  it('reuse of a spent token revokes the whole family', async () => {
    const first = await login(ctx.app, 'carla', CUSTOMER_PASSWORD);
    const second = await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: first.refresh_token }).expect(200);
    const replay = await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: first.refresh_token }).expect(400);
    expect(replay.body.error).toBe('invalid_grant');
    // The legitimate successor is revoked too: the thief and the owner must both log in again.
    const after = await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token }).expect(400);
    expect(after.body.error).toBe('invalid_grant');
  });

  it('concurrent use of one token: exactly one succeeds and the family ends revoked', async () => {
    const first = await login(ctx.app, 'carla', CUSTOMER_PASSWORD);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: first.refresh_token })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(results.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(7);
    await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: ok[0].body.refresh_token }).expect(400);
  });

  it('rejects an unknown refresh token', async () => {
    const res = await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: 'rt_made-up' }).expect(400);
    expect(res.body.error).toBe('invalid_grant');
  });
});

describe('deactivated users', () => {
  it('lose their access tokens at once, cannot log in and cannot refresh', async () => {
    const user = await createUser(ctx.app, adminBearer, { userName: 'dora', email: 'dora@example.com', password: 'dora-password-1' });
    const tokens = await login(ctx.app, 'dora', 'dora-password-1');
    await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', `Bearer ${tokens.access_token}`).expect(200);
    await request(ctx.app)
      .post('/api/rest/v1/users/update-roles')
      .set('authorization', adminBearer)
      .send({ id: user.id, roles: ['customer'], isActive: false })
      .expect(200);
    await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', `Bearer ${tokens.access_token}`).expect(401);
    const again = await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'password', username: 'dora', password: 'dora-password-1' }).expect(400);
    expect(again.body.error).toBe('invalid_grant');
    const refresh = await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(400);
    expect(refresh.body.error).toBe('invalid_grant');
    // Reactivated: logging in works again.
    await request(ctx.app)
      .post('/api/rest/v1/users/update-roles')
      .set('authorization', adminBearer)
      .send({ id: user.id, roles: ['customer'], isActive: true })
      .expect(200);
    await login(ctx.app, 'dora', 'dora-password-1');
  });
});

describe('login rate limits', () => {
  it('answer 429 with Retry-After after N failures for an account, even for the right password', async () => {
    await createUser(ctx.app, adminBearer, { userName: 'eve-target', email: 'eve@example.com', password: 'eve-target-password' });
    for (let i = 0; i < 3; i++) {
      await request(ctx.app)
        .post(TOKEN)
        .type('form')
        .send({ grant_type: 'password', username: 'eve-target', password: `guess-${i}-guess` })
        .expect(400);
    }
    const res = await request(ctx.app)
      .post(TOKEN)
      .type('form')
      .send({ grant_type: 'password', username: 'eve-target', password: 'eve-target-password' })
      .expect(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(900);
    expectNoStore(res);
    // Other accounts are unaffected.
    await login(ctx.app, 'carla', CUSTOMER_PASSWORD);
  });

  it('answer 429 per IP address across accounts', async () => {
    const ipCtx = await startIdentity({ LOGIN_MAX_FAILURES_PER_IP: '3' });
    try {
      for (let i = 0; i < 3; i++) {
        await request(ipCtx.app)
          .post(TOKEN)
          .type('form')
          .send({ grant_type: 'password', username: `someone-${i}`, password: 'wrong-password' })
          .expect(400);
      }
      const res = await request(ipCtx.app).post(TOKEN).type('form').send({ grant_type: 'password', username: 'admin', password: ADMIN_PASSWORD }).expect(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await ipCtx.close();
    }
  });
});

describe('secrets never leak', () => {
  it('no password, password hash or token appears in any log line', async () => {
    const all = ctx.logs.join('\n');
    for (const secret of [ADMIN_PASSWORD, CUSTOMER_PASSWORD, 'dora-password-1', 'eve-target-password', '$scrypt$']) expect(all).not.toContain(secret);
    expect(all).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\./);
    expect(all).not.toMatch(/rt_[\w-]{20,}/);
  });
});

describe('bootstrap admin', () => {
  it('in development without BOOTSTRAP_ADMIN_PASSWORD: generates, stores and logs the password once; never twice', async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const { bootstrapAdmin } = await import('../src/identity/bootstrap');
    const { createOrderingDatabase } = await import('./support/app');
    const { loadOrderingConfig } = await import('../src/config');
    const pino = (await import('pino')).default;
    const db = await createOrderingDatabase();
    let dataDir: string | undefined;
    try {
      dataDir = mkdtempSync(path.join(tmpdir(), 'ordering-bootstrap-'));
      const config = loadOrderingConfig({ DATA_DIR: dataDir, APP_ENV: 'development' });
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
      expect(await bootstrapAdmin({ database: db.database, config, logger })).toBe(true);
      expect(await bootstrapAdmin({ database: db.database, config, logger })).toBe(false);
      const password = readFileSync(path.join(dataDir, 'keys', 'ordering-admin-password'), 'utf8').trim();
      expect(lines.filter((l) => l.includes(password))).toHaveLength(1);
      const admin = await db.database.db.selectFrom('users').selectAll().executeTakeFirstOrThrow();
      expect(admin).toMatchObject({ user_name: 'admin', roles: ['admin'], user_group: 'internal', is_active: true });
      const { verifyPassword, SCRYPT_PARAMS } = await import('../src/identity/passwords');
      expect(admin.password_hash).toMatch(new RegExp(`^\\$scrypt\\$ln=${SCRYPT_PARAMS.ln},r=8,p=1\\$`));
      expect(await verifyPassword(password, admin.password_hash)).toBe(true);
      // Production without a password creates nobody.
      const prod = await createOrderingDatabase();
      try {
        expect(await bootstrapAdmin({ database: prod.database, config: { ...config, environment: 'production' }, logger })).toBe(false);
      } finally {
        await prod.close();
      }
    } finally {
      await db.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('password hash cost', () => {
  it('is the OWASP setting unless lowered for tests; production refuses a lowered cost; a hash of any cost verifies', async () => {
    const { scryptLnFromEnv } = await import('../src/config');
    const { hashPassword, verifyPassword } = await import('../src/identity/passwords');
    expect(scryptLnFromEnv({})).toBe(17);
    expect(scryptLnFromEnv({ PASSWORD_HASH_COST_LN: '10', APP_ENV: 'test' })).toBe(10);
    expect(() => scryptLnFromEnv({ PASSWORD_HASH_COST_LN: '10', APP_ENV: 'production' })).toThrow(/PASSWORD_HASH_COST_LN/);
    expect(scryptLnFromEnv({ PASSWORD_HASH_COST_LN: '17', APP_ENV: 'production' })).toBe(17);
    expect(() => scryptLnFromEnv({ PASSWORD_HASH_COST_LN: '4' })).toThrow(/PASSWORD_HASH_COST_LN/);
    const owasp = await hashPassword('correct horse battery', { ln: 17, r: 8, p: 1 });
    expect(owasp).toMatch(/^\$scrypt\$ln=17,/);
    expect(await verifyPassword('correct horse battery', owasp)).toBe(true);
  });
});
