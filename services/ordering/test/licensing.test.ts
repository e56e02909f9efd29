/**
 * Licensing (ordering spec §4.7): free licenses with hashed secrets, atomic assignment (proven with
 * concurrent requests), Ed25519 license keys mailed through the outbox and verifiable offline, and
 * visibility (a customer sees only his own licenses; anything else is 404).
 */
import { createHash } from 'node:crypto';
import request from 'supertest';
import { ADMIN_PASSWORD, bearerOf, createUser, startIdentity, verifyOwnEmail, type IdentityTestContext } from './support/identity';
import { verifyLicenseKey } from './support/license-keys';

let ctx: IdentityTestContext;
let admin: string;
let support: string;
let carl: string;
let dana: string;
const PW = 'licensing-password-1';
const L = '/api/rest/v1/licensing';

beforeAll(async () => {
  ctx = await startIdentity();
  admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
  await Promise.all([
    createUser(ctx.app, admin, { userName: 'sue', email: 'sue@example.com', password: PW, roles: ['support'] }),
    createUser(ctx.app, admin, { userName: 'carl', email: 'carl@example.com', password: PW }),
    createUser(ctx.app, admin, { userName: 'dana', email: 'dana@example.com', password: PW }),
  ]);
  [support, carl, dana] = await Promise.all([bearerOf(ctx.app, 'sue', PW), bearerOf(ctx.app, 'carl', PW), bearerOf(ctx.app, 'dana', PW)]);
  // Licenses follow verified addresses only.
  await Promise.all([verifyOwnEmail(ctx, carl), verifyOwnEmail(ctx, dana)]);
});
afterAll(async () => ctx.close());

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('create-licenses and secret-hashes', () => {
  it('creates free licenses whose secret hashes are listed in creation order', async () => {
    await request(ctx.app).post(`${L}/create-licenses`).query({ product: 'resultsManager', numberOfLicenses: 3 }).set('authorization', admin).expect(200);
    const res = await request(ctx.app).get(`${L}/secret-hashes`).query({ product: 'resultsManager' }).set('authorization', admin).expect(200);
    expect(res.body).toHaveLength(3);
    for (const h of res.body) expect(h).toMatch(/^[0-9a-f]{64}$/);
    const rows = await ctx.database.db.selectFrom('licenses').selectAll().orderBy('seq').execute();
    expect(rows.map((r) => r.secret_hash)).toEqual(res.body);
    expect(rows.every((r) => r.email === null)).toBe(true);
  });

  it('bounds the number of licenses and the product list', async () => {
    await request(ctx.app).post(`${L}/create-licenses`).query({ product: 'resultsManager', numberOfLicenses: 1001 }).set('authorization', admin).expect(400);
    await request(ctx.app).post(`${L}/create-licenses`).query({ product: 'photoshop', numberOfLicenses: 1 }).set('authorization', admin).expect(400);
  });
});

describe('assign-license', () => {
  it('binds a free license to an e-mail and returns its secret, whose hash is listed', async () => {
    const res = await request(ctx.app)
      .post(`${L}/assign-license`)
      .set('authorization', support)
      .send({ product: 'resultsManager', email: 'carl@example.com' })
      .expect(200);
    expect(res.body).toMatchObject({ product: 'resultsManager', email: 'carl@example.com', key: null, keyIssuedAt: null });
    const hashes = (await request(ctx.app).get(`${L}/secret-hashes`).query({ product: 'resultsManager' }).set('authorization', admin)).body as string[];
    expect(hashes).toContain(sha256(res.body.secret));
    // The secret itself is stored nowhere.
    const rows = await ctx.database.db.selectFrom('licenses').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(res.body.secret);
  });

  it('assigns a named free license, and refuses a taken or unknown one', async () => {
    const [free] = await ctx.database.db
      .selectFrom('licenses')
      .select('id')
      .where('email', 'is', null)
      .where('product', '=', 'resultsManager')
      .orderBy('seq')
      .limit(1)
      .execute();
    await request(ctx.app)
      .post(`${L}/assign-license`)
      .set('authorization', admin)
      .send({ product: 'resultsManager', email: 'dana@example.com', licenseId: free.id })
      .expect(200);
    await request(ctx.app)
      .post(`${L}/assign-license`)
      .set('authorization', admin)
      .send({ product: 'resultsManager', email: 'carl@example.com', licenseId: free.id })
      .expect(409);
    await request(ctx.app)
      .post(`${L}/assign-license`)
      .set('authorization', admin)
      .send({ product: 'resultsManager', email: 'carl@example.com', licenseId: '00000000-0000-4000-8000-000000000000' })
      .expect(404);
  });

  it('concurrent assignments never share a license; the surplus gets 409', async () => {
    await request(ctx.app).post(`${L}/create-licenses`).query({ product: 'sportidentReaderApp', numberOfLicenses: 10 }).set('authorization', admin).expect(200);
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        request(ctx.app)
          .post(`${L}/assign-license`)
          .set('authorization', admin)
          .send({ product: 'sportidentReaderApp', email: `runner${i}@example.com` }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(10);
    expect(results.filter((r) => r.status === 409)).toHaveLength(15);
    expect(new Set(ok.map((r) => r.body.licenseId)).size).toBe(10);
    const rows = await ctx.database.db.selectFrom('licenses').selectAll().where('product', '=', 'sportidentReaderApp').execute();
    expect(rows.every((r) => r.email !== null)).toBe(true);
    expect(new Set(rows.map((r) => r.email)).size).toBe(10);
  });

  it('is staff-only', async () => {
    await request(ctx.app).post(`${L}/assign-license`).set('authorization', carl).send({ product: 'resultsManager', email: 'carl@example.com' }).expect(403);
  });
});

describe('request-license-key', () => {
  it('issues a signed key for the own license, mails key and secret once, and the key verifies offline', async () => {
    await request(ctx.app)
      .post(`${L}/request-license-key`)
      .set('authorization', carl)
      .send({ product: 'resultsManager', email: 'carl@example.com' })
      .expect(200);
    const [license] = (await request(ctx.app).get(`${L}/licenses`).set('authorization', carl).expect(200)).body;
    expect(license.key).toEqual(expect.any(String));
    const pub = (await request(ctx.app).get(`${L}/public-key`).expect(200)).body;
    expect(pub).toMatchObject({ algorithm: 'Ed25519', jwk: { kty: 'OKP', crv: 'Ed25519' } });
    const payload = verifyLicenseKey(license.key, pub.publicKeyPem);
    expect(payload).toMatchObject({
      v: 1,
      licenseId: license.licenseId,
      product: 'resultsManager',
      email: 'carl@example.com',
      secretHash: sha256(license.secret),
    });
    const mails = await ctx.database.db.selectFrom('outbox_messages').selectAll().where('dedupe_key', 'like', `license-key:${license.licenseId}:%`).execute();
    expect(mails).toHaveLength(1);
    const mail = typeof mails[0].payload === 'string' ? JSON.parse(mails[0].payload) : mails[0].payload;
    expect(mail.to).toBe('carl@example.com');
    expect(mail.text).toContain(license.key);
    expect(mail.text).toContain(license.secret);
  });

  it('a second request issues a new key and a second e-mail', async () => {
    await request(ctx.app)
      .post(`${L}/request-license-key`)
      .set('authorization', carl)
      .send({ product: 'resultsManager', email: 'carl@example.com' })
      .expect(200);
    const n = await ctx.database.db.selectFrom('outbox_messages').select('id').where('dedupe_key', 'like', 'license-key:%').execute();
    expect(n).toHaveLength(2);
  });

  it('any changed byte of the key fails verification', async () => {
    const [license] = (await request(ctx.app).get(`${L}/licenses`).set('authorization', carl).expect(200)).body;
    const pub = (await request(ctx.app).get(`${L}/public-key`)).body.publicKeyPem as string;
    const key = license.key as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < key.length; i++) {
      if (key[i] === '.') continue;
      const replacement = alphabet[(alphabet.indexOf(key[i]) + 1) % alphabet.length];
      expect(verifyLicenseKey(key.slice(0, i) + replacement + key.slice(i + 1), pub)).toBeNull();
    }
    // A payload edited in its decoded form fails too.
    const [p, s] = key.split('.');
    const edited = Buffer.from(Buffer.from(p, 'base64url').toString().replace('carl@', 'mall@')).toString('base64url');
    expect(verifyLicenseKey(`${edited}.${s}`, pub)).toBeNull();
    expect(verifyLicenseKey(key, pub)).not.toBeNull();
  });

  it("another customer's address or license is 404, exactly like a missing license", async () => {
    const foreign = await request(ctx.app)
      .post(`${L}/request-license-key`)
      .set('authorization', dana)
      .send({ product: 'resultsManager', email: 'carl@example.com' })
      .expect(404);
    const missing = await request(ctx.app)
      .post(`${L}/request-license-key`)
      .set('authorization', dana)
      .send({ product: 'sportidentCenterPro', email: 'dana@example.com' })
      .expect(404);
    expect(foreign.body.detail).toBe(missing.body.detail);
    const [carlLicense] = (await request(ctx.app).get(`${L}/licenses`).set('authorization', carl)).body;
    await request(ctx.app)
      .post(`${L}/request-license-key`)
      .set('authorization', dana)
      .send({ product: 'resultsManager', email: 'dana@example.com', licenseId: carlLicense.licenseId })
      .expect(404);
  });

  it('staff may issue keys for any address', async () => {
    await request(ctx.app)
      .post(`${L}/request-license-key`)
      .set('authorization', support)
      .send({ product: 'resultsManager', email: 'dana@example.com' })
      .expect(200);
  });
});

describe('licenses', () => {
  it("lists the caller's own licenses by default and by explicit address", async () => {
    const own = await request(ctx.app).get(`${L}/licenses`).set('authorization', carl).expect(200);
    expect(own.body).toHaveLength(1);
    const explicit = await request(ctx.app)
      .get(`${L}/licenses`)
      .query({ email: 'CARL@example.com', product: 'resultsManager' })
      .set('authorization', carl)
      .expect(200);
    expect(explicit.body).toEqual(own.body);
    const none = await request(ctx.app).get(`${L}/licenses`).query({ product: 'sportidentConfigPlus' }).set('authorization', carl).expect(200);
    expect(none.body).toEqual([]);
  });

  it('another address is 404 for a customer, visible for staff', async () => {
    await request(ctx.app).get(`${L}/licenses`).query({ email: 'dana@example.com' }).set('authorization', carl).expect(404);
    await request(ctx.app).get(`${L}/licenses`).query({ email: 'nobody@example.com' }).set('authorization', carl).expect(404);
    const staff = await request(ctx.app).get(`${L}/licenses`).query({ email: 'dana@example.com' }).set('authorization', support).expect(200);
    expect(staff.body).toHaveLength(1);
  });
});
