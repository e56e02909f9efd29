/**
 * Users (ordering spec §4.6): creation rules, visibility (404 for other users, never 403), self-service
 * profile changes without mass assignment, and role changes that never leave the service without an admin.
 */
import request from 'supertest';
import { ADMIN_PASSWORD, bearerOf, createUser, login, startIdentity, type IdentityTestContext, type User } from './support/identity';

let ctx: IdentityTestContext;
let admin: string;
let anna: User;
let ben: User;
let annaBearer: string;
const PW = 'correct-horse-battery';

beforeAll(async () => {
  ctx = await startIdentity();
  admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
  [anna, ben] = await Promise.all([
    createUser(ctx.app, admin, { userName: 'anna', email: 'anna@example.com', password: PW, firstName: 'Anna', culture: 'de-CH' }),
    createUser(ctx.app, admin, { userName: 'ben', email: 'ben@example.com', password: PW }),
  ]);
  annaBearer = await bearerOf(ctx.app, 'anna', PW);
});
afterAll(async () => ctx.close());

describe('create', () => {
  it('returns the User without any password field, with defaults applied', async () => {
    expect(anna).toMatchObject({
      userName: 'anna',
      email: 'anna@example.com',
      roles: ['customer'],
      userGroup: 'public',
      culture: 'de-CH',
      isActive: true,
      emailVerified: false,
      lastLoginAt: null,
      erpRetailerEntityId: null,
    });
    expect(Object.keys(anna).sort()).toEqual(
      [
        'createdAt',
        'culture',
        'email',
        'emailVerified',
        'erpRetailerEntityId',
        'firstName',
        'id',
        'isActive',
        'lastLoginAt',
        'lastName',
        'roles',
        'updatedAt',
        'userGroup',
        'userName',
      ].sort(),
    );
    const list = await request(ctx.app).get('/api/rest/v1/users').set('authorization', admin).expect(200);
    expect(JSON.stringify(list.body)).not.toMatch(/password|scrypt/i);
    expect(list.body.map((u: User) => u.userName)).toEqual(['admin', 'anna', 'ben']);
    // The login was recorded.
    expect(list.body.find((u: User) => u.userName === 'anna').lastLoginAt).not.toBeNull();
  });

  it('refuses a taken user name (case-insensitive) or e-mail with 409', async () => {
    await request(ctx.app)
      .post('/api/rest/v1/users')
      .set('authorization', admin)
      .send({ userName: 'ANNA', email: 'other@example.com', password: PW })
      .expect(409);
    await request(ctx.app)
      .post('/api/rest/v1/users')
      .set('authorization', admin)
      .send({ userName: 'anna2', email: 'Anna@Example.com', password: PW })
      .expect(409);
  });

  it('enforces the password policy and the e-mail format', async () => {
    const short = await request(ctx.app)
      .post('/api/rest/v1/users')
      .set('authorization', admin)
      .send({ userName: 'shorty', email: 's@example.com', password: 'short' })
      .expect(400);
    expect(short.body.errors.password).toBeDefined();
    const same = await request(ctx.app)
      .post('/api/rest/v1/users')
      .set('authorization', admin)
      .send({ userName: 'samesame.user', email: 's@example.com', password: 'SameSame.User' })
      .expect(400);
    expect(same.body.errors.password).toEqual(['must not be the user name']);
    const mail = await request(ctx.app)
      .post('/api/rest/v1/users')
      .set('authorization', admin)
      .send({ userName: 'mailer', email: 'not-an-email', password: PW })
      .expect(400);
    expect(mail.body.errors.email).toBeDefined();
  });

  it('requires retailer group and ERP link for retailers', async () => {
    const res = await request(ctx.app)
      .post('/api/rest/v1/users')
      .set('authorization', admin)
      .send({ userName: 'shop1', email: 'shop1@example.com', password: PW, roles: ['retailer'] })
      .expect(400);
    expect(res.body.errors.erpRetailerEntityId).toBeDefined();
    const ok = await createUser(ctx.app, admin, {
      userName: 'shop2',
      email: 'shop2@example.com',
      password: PW,
      roles: ['retailer'],
      erpRetailerEntityId: 'C-1001',
    });
    expect(ok).toMatchObject({ userGroup: 'retailer', erpRetailerEntityId: 'C-1001' });
  });
});

describe('visibility', () => {
  it('a customer reads himself by id and by name', async () => {
    await request(ctx.app).get(`/api/rest/v1/users/${anna.id}`).set('authorization', annaBearer).expect(200);
    const byName = await request(ctx.app).get('/api/rest/v1/users/get-by-name').query({ userName: 'ANNA' }).set('authorization', annaBearer).expect(200);
    expect(byName.body.id).toBe(anna.id);
  });

  it('another user is 404 for a customer, exactly like a missing one', async () => {
    const other = await request(ctx.app).get(`/api/rest/v1/users/${ben.id}`).set('authorization', annaBearer).expect(404);
    const missing = await request(ctx.app).get('/api/rest/v1/users/99999').set('authorization', annaBearer).expect(404);
    expect(other.body.detail).toBe(missing.body.detail);
    await request(ctx.app).get('/api/rest/v1/users/get-by-name').query({ userName: 'ben' }).set('authorization', annaBearer).expect(404);
    await request(ctx.app).get('/api/rest/v1/users/get-by-name').query({ userName: 'admin' }).set('authorization', annaBearer).expect(404);
  });

  it('staff read everyone; customers may not list', async () => {
    await request(ctx.app).get(`/api/rest/v1/users/${ben.id}`).set('authorization', admin).expect(200);
    await request(ctx.app).get('/api/rest/v1/users').set('authorization', annaBearer).expect(403);
  });
});

describe('update-profile', () => {
  it.each([
    ['roles', { roles: ['admin'] }],
    ['userGroup', { userGroup: 'internal' }],
    ['isActive', { isActive: false }],
    ['id', { id: 1, firstName: 'x' }],
    ['userName', { userName: 'root' }],
    ['an unknown field', { favouriteColour: 'red' }],
    ['nothing', {}],
  ])('rejects %s with 400 and changes nothing', async (_what, body) => {
    await request(ctx.app).post('/api/rest/v1/users/update-profile').set('authorization', annaBearer).send(body).expect(400);
    const me = await request(ctx.app).get(`/api/rest/v1/users/${anna.id}`).set('authorization', admin).expect(200);
    expect(me.body).toMatchObject({ roles: ['customer'], userGroup: 'public', isActive: true, userName: 'anna' });
  });

  it("changes the caller's own names and culture at once; a new e-mail address only once verified (email-verification.test.ts)", async () => {
    const res = await request(ctx.app)
      .post('/api/rest/v1/users/update-profile')
      .set('authorization', annaBearer)
      .send({ firstName: 'Annette', lastName: null, culture: 'fr', email: 'annette@example.com' })
      .expect(200);
    expect(res.body).toMatchObject({ id: anna.id, firstName: 'Annette', lastName: null, culture: 'fr', email: 'anna@example.com', emailVerified: false });
    // A taken address answers exactly like a free one.
    const taken = await request(ctx.app)
      .post('/api/rest/v1/users/update-profile')
      .set('authorization', annaBearer)
      .send({ email: 'ben@example.com' })
      .expect(200);
    expect(taken.body.email).toBe('anna@example.com');
  });

  it('changes the password only with the current one, and ends every session', async () => {
    const session = await login(ctx.app, 'ben', PW);
    const benBearer = `Bearer ${session.access_token}`;
    const missing = await request(ctx.app)
      .post('/api/rest/v1/users/update-profile')
      .set('authorization', benBearer)
      .send({ newPassword: 'a-brand-new-password' })
      .expect(400);
    expect(missing.body.errors.currentPassword).toBeDefined();
    const wrong = await request(ctx.app)
      .post('/api/rest/v1/users/update-profile')
      .set('authorization', benBearer)
      .send({ currentPassword: 'nope-nope-nope', newPassword: 'a-brand-new-password' })
      .expect(400);
    expect(wrong.body.errors.currentPassword).toBeDefined();
    const res = await request(ctx.app)
      .post('/api/rest/v1/users/update-profile')
      .set('authorization', benBearer)
      .send({ currentPassword: PW, newPassword: 'a-brand-new-password' })
      .expect(200);
    expect(JSON.stringify(res.body)).not.toContain('a-brand-new-password');
    // Every access token issued before the change is refused, this one included.
    await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', benBearer).expect(401);
    await request(ctx.app).post('/api/rest/v1/auth/token').type('form').send({ grant_type: 'refresh_token', refresh_token: session.refresh_token }).expect(400);
    await request(ctx.app).post('/api/rest/v1/auth/token').type('form').send({ grant_type: 'password', username: 'ben', password: PW }).expect(400);
    await login(ctx.app, 'ben', 'a-brand-new-password');
  });
});

describe('update-roles', () => {
  it('changes roles, group, link and active flag (admin only)', async () => {
    await request(ctx.app)
      .post('/api/rest/v1/users/update-roles')
      .set('authorization', annaBearer)
      .send({ id: anna.id, roles: ['admin'] })
      .expect(403);
    const res = await request(ctx.app)
      .post('/api/rest/v1/users/update-roles')
      .set('authorization', admin)
      .send({ id: ben.id, roles: ['retailer'], userGroup: 'retailer', erpRetailerEntityId: 'C-2002' })
      .expect(200);
    expect(res.body).toMatchObject({ roles: ['retailer'], userGroup: 'retailer', erpRetailerEntityId: 'C-2002' });
    await request(ctx.app)
      .post('/api/rest/v1/users/update-roles')
      .set('authorization', admin)
      .send({ id: ben.id, roles: ['retailer'], erpRetailerEntityId: null })
      .expect(400);
    await request(ctx.app)
      .post('/api/rest/v1/users/update-roles')
      .set('authorization', admin)
      .send({ id: 99999, roles: ['customer'] })
      .expect(404);
  });

  it('refuses to remove the last active admin (409)', async () => {
    const me = await request(ctx.app).get('/api/rest/v1/users/get-by-name').query({ userName: 'admin' }).set('authorization', admin).expect(200);
    await request(ctx.app)
      .post('/api/rest/v1/users/update-roles')
      .set('authorization', admin)
      .send({ id: me.body.id, roles: ['support'] })
      .expect(409);
    await request(ctx.app)
      .post('/api/rest/v1/users/update-roles')
      .set('authorization', admin)
      .send({ id: me.body.id, roles: ['admin'], isActive: false })
      .expect(409);
  });

  it('two admins demoting each other concurrently: exactly one succeeds, one admin remains', async () => {
    const a = await createUser(ctx.app, admin, { userName: 'admin-a', email: 'aa@example.com', password: PW, roles: ['admin'] });
    const me = await request(ctx.app).get('/api/rest/v1/users/get-by-name').query({ userName: 'admin' }).set('authorization', admin).expect(200);
    const aBearer = await bearerOf(ctx.app, 'admin-a', PW);
    const [r1, r2] = await Promise.all([
      request(ctx.app)
        .post('/api/rest/v1/users/update-roles')
        .set('authorization', admin)
        .send({ id: a.id, roles: ['customer'] }),
      request(ctx.app)
        .post('/api/rest/v1/users/update-roles')
        .set('authorization', aBearer)
        .send({ id: me.body.id, roles: ['customer'] }),
    ]);
    expect([r1.status, r2.status].sort()).toEqual([200, 409]);
    const { sql } = await import('kysely');
    const left = await sql<{ n: number }>`select count(*)::int as n from users where is_active and 'admin' = any(roles)`.execute(ctx.database.db);
    expect(left.rows[0].n).toBe(1);
  });
});
