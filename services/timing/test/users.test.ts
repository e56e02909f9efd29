/**
 * Users, API keys and modems (tags `users`, `keys`, `modems` of specs/timing.yaml), the bootstrap admin, and the
 * rules of the `apikey` header.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createLogger } from '@sports-timing/shared';
import { runStartupTasks, DEV_ADMIN_KEY_FILE } from '../src/bootstrap';
import { generateApiKey } from '../src/auth/keys';
import { loadTimingConfig } from '../src/config';
import { startTiming, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;
beforeAll(async () => {
  ctx = await startTiming();
});
afterAll(async () => ctx.close());

describe('users', () => {
  it('lets an admin create a user whose first key is shown once and works at once', async () => {
    const res = await request(ctx.app).post('/api/rest/v1/users').set('apikey', ctx.adminKey).send({ userName: 'club-a', keyName: 'laptop' }).expect(201);
    expect(res.headers.location).toBe(`/api/rest/v1/users/${res.body.user.id}`);
    expect(res.body.user).toMatchObject({ userName: 'club-a', role: 'user' });
    expect(res.body.key.key).toMatch(/^tk_[A-Za-z0-9_-]{43}$/);
    expect(res.body.key).toMatchObject({ name: 'laptop', prefix: res.body.key.key.slice(0, 10), revokedAt: null });
    const keys = await request(ctx.app).get('/api/rest/v1/keys').set('apikey', res.body.key.key).expect(200);
    expect(keys.body).toHaveLength(1);
    expect(keys.body[0].key).toBeUndefined();
    await request(ctx.app).get(res.headers.location).set('apikey', ctx.adminKey).expect(200);
  });

  it('is admin only: 401 anonymous, 403 for a user, 409 for a taken name', async () => {
    const user = await ctx.createUser('plain');
    await request(ctx.app).post('/api/rest/v1/users').send({ userName: 'x1' }).expect(401);
    await request(ctx.app).post('/api/rest/v1/users').set('apikey', user.key).send({ userName: 'x1' }).expect(403);
    await request(ctx.app).get('/api/rest/v1/users').set('apikey', user.key).expect(403);
    await request(ctx.app).post('/api/rest/v1/users').set('apikey', ctx.adminKey).send({ userName: 'plain' }).expect(409);
    await request(ctx.app).post('/api/rest/v1/users').set('apikey', ctx.adminKey).send({ userName: 'bad name' }).expect(400);
    const all = await request(ctx.app).get('/api/rest/v1/users').set('apikey', ctx.adminKey).expect(200);
    expect(all.body.map((u: { userName: string }) => u.userName)).toEqual(expect.arrayContaining(['admin', 'plain']));
    await request(ctx.app).get('/api/rest/v1/users/999999').set('apikey', ctx.adminKey).expect(404);
  });
});

describe('getCaller', () => {
  it("names the key's user, role and key id; 401 without a key and for a revoked one", async () => {
    const user = await ctx.createUser('who-am-i');
    const second = await request(ctx.app).post('/api/rest/v1/keys').set('apikey', user.key).send({ name: 'phone' }).expect(201);
    const me = await request(ctx.app).get('/api/rest/v1/me').set('apikey', second.body.key).expect(200);
    expect(me.body).toEqual({ userName: 'who-am-i', role: 'user', keyId: second.body.id });
    expect((await request(ctx.app).get('/api/rest/v1/me').set('apikey', ctx.adminKey).expect(200)).body).toMatchObject({ userName: 'admin', role: 'admin' });
    await request(ctx.app).get('/api/rest/v1/me').expect(401);
    await request(ctx.app).delete(`/api/rest/v1/keys/${second.body.id}`).set('apikey', user.key).expect(204);
    await request(ctx.app).get('/api/rest/v1/me').set('apikey', second.body.key).expect(401);
  });
});

describe('keys', () => {
  it('creates, lists and revokes own keys; a revoked key is refused at once', async () => {
    const user = await ctx.createUser('keyholder');
    const created = await request(ctx.app).post('/api/rest/v1/keys').set('apikey', user.key).send({ name: 'modem fleet' }).expect(201);
    const second = created.body.key as string;
    expect(created.headers.location).toBe(`/api/rest/v1/keys/${created.body.id}`);
    await request(ctx.app).get(created.headers.location).set('apikey', second).expect(200);
    const list = await request(ctx.app).get('/api/rest/v1/keys').set('apikey', second).expect(200);
    expect(list.body.map((k: { name: string }) => k.name)).toEqual(['default', 'modem fleet']);
    expect(JSON.stringify(list.body)).not.toContain(second);
    await request(ctx.app).delete(`/api/rest/v1/keys/${created.body.id}`).set('apikey', user.key).expect(204);
    const refused = await request(ctx.app).get('/api/rest/v1/keys').set('apikey', second).expect(401);
    expect(refused.body.detail).toMatch(/revoked/);
    const after = await request(ctx.app).get('/api/rest/v1/keys').set('apikey', user.key).expect(200);
    expect(after.body[1].revokedAt).toEqual(expect.any(String));
    // Revoking again is a no-op.
    await request(ctx.app).delete(`/api/rest/v1/keys/${created.body.id}`).set('apikey', user.key).expect(204);
  });

  it('hides other users’ keys (404) but lets an admin revoke any', async () => {
    const a = await ctx.createUser('key-a');
    const b = await ctx.createUser('key-b');
    const bKeys = await request(ctx.app).get('/api/rest/v1/keys').set('apikey', b.key).expect(200);
    const bKeyId = bKeys.body[0].id;
    await request(ctx.app).get(`/api/rest/v1/keys/${bKeyId}`).set('apikey', a.key).expect(404);
    await request(ctx.app).delete(`/api/rest/v1/keys/${bKeyId}`).set('apikey', a.key).expect(404);
    await request(ctx.app).get('/api/rest/v1/keys').set('apikey', b.key).expect(200);
    await request(ctx.app).delete(`/api/rest/v1/keys/${bKeyId}`).set('apikey', ctx.adminKey).expect(204);
    await request(ctx.app).get('/api/rest/v1/keys').set('apikey', b.key).expect(401);
  });

  it('stores only the SHA-256 of a key', async () => {
    const u = await ctx.createUser('hashed');
    const { rows } = await ctx.database.pool.query<{ key_hash: Buffer; prefix: string }>(
      `select k.key_hash, k.prefix from api_keys k join users u on u.id = k.user_id where u.user_name = 'hashed'`,
    );
    expect(rows[0].key_hash).toHaveLength(32);
    expect(rows[0].key_hash.toString('utf8')).not.toContain(u.key);
    expect(rows[0].prefix).toBe(u.key.slice(0, 10));
  });
});

describe('the apikey header', () => {
  it('401s an unknown key on every operation, public ones included, and ignores an empty header', async () => {
    for (const url of ['/api/rest/v1/events', '/api/rest/v1/public/versions', '/api/rest/v1/modems']) {
      const res = await request(ctx.app).get(url).set('apikey', 'tk_bogus').expect(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    await request(ctx.app).get('/api/rest/v1/punches?modem=M').set('apikey', 'x'.repeat(5000)).expect(401);
    await request(ctx.app).get('/api/rest/v1/events').set('apikey', '').expect(200);
    await request(ctx.app).get('/api/rest/v1/modems').expect(401);
  });
});

describe('bootstrap', () => {
  it('creates admin with TIMING_BOOTSTRAP_API_KEY on a fresh database only', async () => {
    const fresh = await startTiming({ withAdmin: false });
    try {
      const config = { ...loadTimingConfig({ TIMING_BOOTSTRAP_API_KEY: 'tk_bootstrap-secret-0123456789-0123456789-abcdef', DEMO_DATA: 'false' }) };
      await runStartupTasks(fresh.timing, config, createLogger('t', 'silent'));
      const users = await request(fresh.app).get('/api/rest/v1/users').set('apikey', 'tk_bootstrap-secret-0123456789-0123456789-abcdef').expect(200);
      expect(users.body).toEqual([expect.objectContaining({ userName: 'admin', role: 'admin' })]);
      // A second start changes nothing, and a different configured key does not become valid.
      await runStartupTasks(fresh.timing, { ...config, bootstrapApiKey: 'tk_another-key-0123456789-0123456789-0123456789' }, createLogger('t', 'silent'));
      await request(fresh.app).get('/api/rest/v1/users').set('apikey', 'tk_another-key-0123456789-0123456789-0123456789').expect(401);
    } finally {
      await fresh.close();
    }
  });

  it.each([
    ['a word', 'CHANGE-ME'],
    ['a short key', 'tk_short'],
    ['a key without the prefix', 'x'.repeat(46)],
    ['a key with other characters', `tk_${'a'.repeat(42)}!`],
  ])('refuses %s as TIMING_BOOTSTRAP_API_KEY at start, naming the format but not the value', (_what, key) => {
    expect(() => loadTimingConfig({ TIMING_BOOTSTRAP_API_KEY: key })).toThrow(/TIMING_BOOTSTRAP_API_KEY.*tk_.*43 base64url/);
    let message = '';
    try {
      loadTimingConfig({ TIMING_BOOTSTRAP_API_KEY: key });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).not.toContain(key);
  });

  it('accepts a generated key as TIMING_BOOTSTRAP_API_KEY (control)', () => {
    const key = generateApiKey();
    expect(loadTimingConfig({ TIMING_BOOTSTRAP_API_KEY: key }).bootstrapApiKey).toBe(key);
  });

  it('generates a development key into <dataDir>/keys when none is configured', async () => {
    const fresh = await startTiming({ withAdmin: false });
    const dataDir = mkdtempSync(path.join(tmpdir(), 'timing-keys-'));
    try {
      const config = loadTimingConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false' });
      await runStartupTasks(fresh.timing, config, createLogger('t', 'silent'));
      const key = readFileSync(path.join(dataDir, 'keys', DEV_ADMIN_KEY_FILE), 'utf8').trim();
      expect(key).toMatch(/^tk_/);
      await request(fresh.app).get('/api/rest/v1/users').set('apikey', key).expect(200);
    } finally {
      await fresh.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
