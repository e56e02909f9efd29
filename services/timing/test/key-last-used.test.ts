/**
 * When each API key was last used (schema `ApiKey.lastUsedAt`, users/key-uses.ts; docs/decisions.md §5 "Key
 * last used"): set by a request with the key (pipeline and upload fast lane), null for a key never used, kept
 * by a revoked key; written at most once per key per granularity and instance (UPDATE statements counted by
 * triggers on the real `api_keys`), about once across instances (the conditional UPDATE); a read-only
 * database fails no request.
 */
import { Writable } from 'node:stream';
import request from 'supertest';
import { createDatabase, createLogger } from '@sports-timing/shared';
import { createApp } from '../src/app';
import type { DB } from '../src/db/schema';
import { PUNCH_SESSION_SETTINGS } from '../src/punches/punches.repository';
import { KeyUses } from '../src/users/key-uses';
import { localMs, startTiming, upload, type TimingTestContext } from './helpers';
import type { components } from '../src/generated/openapi';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

let ctx: TimingTestContext;
beforeAll(async () => {
  ctx = await startTiming();
  // Counters of the writes of `last_used_at`: one per UPDATE statement naming the column (a statement trigger
  // fires even when the statement changes no row) and one per row it changes. In this file's own database.
  await ctx.database.pool.query(`
    create table key_use_writes (statements integer not null, rows integer not null);
    insert into key_use_writes values (0, 0);
    create function count_key_use_statement() returns trigger language plpgsql as $$
      begin update timing.key_use_writes set statements = statements + 1; return null; end $$;
    create function count_key_use_row() returns trigger language plpgsql as $$
      begin update timing.key_use_writes set rows = rows + 1; return null; end $$;
    create trigger key_use_statement after update of last_used_at on api_keys for each statement execute function count_key_use_statement();
    create trigger key_use_row after update of last_used_at on api_keys for each row execute function count_key_use_row();
  `);
});
afterAll(async () => ctx.close());

/** API `ApiKey` (the list answer). */
type KeyBody = components['schemas']['ApiKey'];

const listKeys = async (key: string): Promise<KeyBody[]> => (await request(ctx.app).get('/api/rest/v1/keys').set('apikey', key).expect(200)).body as KeyBody[];
const dbNow = async (): Promise<number> => (await ctx.database.pool.query<{ now: Date }>('select now()')).rows[0].now.getTime();
const writes = async (): Promise<{ statements: number; rows: number }> =>
  (await ctx.database.pool.query<{ statements: number; rows: number }>('select statements, rows from key_use_writes')).rows[0];
const storedLastUse = async (keyId: number): Promise<Date | null> =>
  (await ctx.database.pool.query<{ last_used_at: Date | null }>('select last_used_at from api_keys where id = $1', [keyId])).rows[0].last_used_at;

describe('lastUsedAt in listKeys', () => {
  it('is set for a key used, null for one never used, and kept when a key is revoked', async () => {
    const user = await ctx.createUser('devices');
    const before = await dbNow();
    const laptop = await request(ctx.app).post('/api/rest/v1/keys').set('apikey', user.key).send({ name: 'laptop' }).expect(201);
    expect(laptop.body.lastUsedAt).toBeNull();
    const spare = await request(ctx.app).post('/api/rest/v1/keys').set('apikey', user.key).send({ name: 'spare' }).expect(201);
    await request(ctx.app).get('/api/rest/v1/me').set('apikey', laptop.body.key).expect(200);
    await ctx.keyUses.settled();
    const after = await dbNow();
    const keys = await listKeys(user.key);
    expect(keys.map((k) => k.name)).toEqual(['default', 'laptop', 'spare']);
    const [first, used, never] = keys;
    for (const k of [first, used]) {
      expect(k.lastUsedAt).toEqual(expect.stringMatching(/Z$/));
      const t = Date.parse(k.lastUsedAt!);
      expect(t).toBeGreaterThanOrEqual(before);
      expect(t).toBeLessThanOrEqual(after);
    }
    expect(never).toMatchObject({ name: 'spare', lastUsedAt: null });
    expect((await request(ctx.app).get(`/api/rest/v1/keys/${spare.body.id}`).set('apikey', user.key).expect(200)).body.lastUsedAt).toBeNull();

    await request(ctx.app).delete(`/api/rest/v1/keys/${used.id}`).set('apikey', user.key).expect(204);
    await request(ctx.app).get('/api/rest/v1/me').set('apikey', laptop.body.key).expect(401);
    await ctx.keyUses.settled();
    const revoked = (await listKeys(user.key)).find((k) => k.id === used.id)!;
    expect(revoked.revokedAt).toEqual(expect.any(String));
    expect(revoked.lastUsedAt).toBe(used.lastUsedAt);
  });

  it('counts an upload and a read on the fast lane, and a key in a ROC path, as uses', async () => {
    const user = await ctx.createUser('modem-owner');
    const make = async (name: string) =>
      (await request(ctx.app).post('/api/rest/v1/keys').set('apikey', user.key).send({ name }).expect(201)).body as components['schemas']['ApiKeyCreated'];
    const uploader = await make('modem');
    const reader = await make('meos');
    const roc = await make('roc unit');
    await upload(ctx, uploader.key, [{ card: '8000001', time: localMs(10), code: 31, type: 'Control', modem: '9100001' }]);
    await request(ctx.app).get('/api/rest/v1/punches?modem=9100001&afterId=0').set('apikey', reader.key).expect(200);
    const event = await request(ctx.app)
      .post('/api/rest/v1/events')
      .set('apikey', user.key)
      .send({ name: 'Key uses', public: false, modems: ['9100001'] })
      .expect(201);
    await request(ctx.app).get(`/roc/key/${roc.key}/getpunches.asp?unitId=${event.body.id}&lastId=0`).expect(200);
    await ctx.keyUses.settled();
    for (const k of [uploader, reader, roc]) expect(await storedLastUse(k.id)).toBeInstanceOf(Date);
  });
});

describe('the throttle', () => {
  it('writes a key’s use once per granularity on an instance, and one instance’s write keeps another’s from changing the row', async () => {
    const user = await ctx.createUser('busy-modem');
    const keyId = (await listKeys(user.key))[0].id;
    await ctx.keyUses.settled();
    const start = await writes();
    // 30 requests, 10 of them at once, within the 60 s granularity.
    for (let i = 0; i < 20; i++) await request(ctx.app).get('/api/rest/v1/me').set('apikey', user.key).expect(200);
    await Promise.all(Array.from({ length: 10 }, () => request(ctx.app).get('/api/rest/v1/me').set('apikey', user.key).expect(200)));
    await ctx.keyUses.settled();
    const once = await writes();
    // listKeys above wrote the use (its own request); the 30 since then wrote nothing.
    expect(once).toEqual(start);
    const written = await storedLastUse(keyId);
    expect(written).toBeInstanceOf(Date);

    // A second instance on the same database: its first use sends one statement, which changes no row.
    const logger = createLogger('timing-test');
    const otherUses = new KeyUses({ db: ctx.database.db, logger });
    const other = createApp({ database: ctx.database, logger, keyUses: otherUses });
    for (let i = 0; i < 5; i++) await request(other).get('/api/rest/v1/me').set('apikey', user.key).expect(200);
    await otherUses.settled();
    expect(await writes()).toEqual({ statements: once.statements + 1, rows: once.rows });
    expect(await storedLastUse(keyId)).toEqual(written);

    // Past the granularity (the stored use made two minutes old), a fresh instance writes the row again.
    await ctx.database.pool.query(`update api_keys set last_used_at = now() - interval '2 minutes' where id = $1`, [keyId]);
    const staleAt = await storedLastUse(keyId);
    const thirdUses = new KeyUses({ db: ctx.database.db, logger });
    await request(createApp({ database: ctx.database, logger, keyUses: thirdUses }))
      .get('/api/rest/v1/me')
      .set('apikey', user.key)
      .expect(200);
    await thirdUses.settled();
    expect((await storedLastUse(keyId))!.getTime()).toBeGreaterThan(staleAt!.getTime());
  });

  it('four instances using a new key at once change its row once', async () => {
    const user = await ctx.createUser('shared-key');
    const fresh = (await request(ctx.app).post('/api/rest/v1/keys').set('apikey', user.key).send({ name: 'shared' }).expect(201))
      .body as components['schemas']['ApiKeyCreated'];
    await ctx.keyUses.settled();
    const logger = createLogger('timing-test');
    const instances = Array.from({ length: 4 }, () => {
      const keyUses = new KeyUses({ db: ctx.database.db, logger });
      return { keyUses, app: createApp({ database: ctx.database, logger, keyUses }) };
    });
    const start = await writes();
    await Promise.all(instances.map((i) => request(i.app).get('/api/rest/v1/me').set('apikey', fresh.key).expect(200)));
    await Promise.all(instances.map((i) => i.keyUses.settled()));
    expect(await writes()).toEqual({ statements: start.statements + 4, rows: start.rows + 1 });
    expect(await storedLastUse(fresh.id)).toBeInstanceOf(Date);
  });

  it('negative control: with a granularity of 0 every use is a statement that changes the row', async () => {
    const user = await ctx.createUser('control');
    await request(ctx.app).get('/api/rest/v1/me').set('apikey', user.key).expect(200);
    await ctx.keyUses.settled();
    const logger = createLogger('timing-test');
    const everyUse = new KeyUses({ db: ctx.database.db, logger, granularityMs: 0 });
    const app = createApp({ database: ctx.database, logger, keyUses: everyUse });
    const start = await writes();
    for (let i = 0; i < 5; i++) {
      await request(app).get('/api/rest/v1/me').set('apikey', user.key).expect(200);
      await everyUse.settled();
    }
    expect(await writes()).toEqual({ statements: start.statements + 5, rows: start.rows + 5 });
  });
});

describe('a database that accepts no writes', () => {
  it('answers every request with a key as usual; the use is not stored, and one warning is logged', async () => {
    const user = await ctx.createUser('read-only-times');
    const keyId = (await listKeys(user.key))[0].id;
    await ctx.database.pool.query('update api_keys set last_used_at = null where id = $1', [keyId]);
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const logger = createLogger('read-only', 'warn', sink);
    // Sessions that refuse writes, as on a server that turned read-only after a fail-over.
    const readOnly = createDatabase<DB>({
      connectTimeoutMs: testConnectTimeoutMs(),
      url: ctx.testDb.url,
      schema: 'timing',
      logger,
      settings: { ...PUNCH_SESSION_SETTINGS, default_transaction_read_only: 'on' },
    });
    const uses = new KeyUses({ db: readOnly.db, logger });
    try {
      const app = createApp({ database: readOnly, logger, keyUses: uses, validateResponses: true });
      const keys = (await request(app).get('/api/rest/v1/keys').set('apikey', user.key).expect(200)).body as KeyBody[];
      expect(keys[0]).toMatchObject({ id: keyId, lastUsedAt: null });
      await request(app).get('/api/rest/v1/me').set('apikey', user.key).expect(200);
      await uses.settled();
    } finally {
      await uses.settled();
      await readOnly.close();
    }
    expect(await storedLastUse(keyId)).toBeNull();
    const warnings = lines.filter((l) => l.includes('could not record the use of an API key'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`"keyId":${keyId}`);
    expect(lines.join('')).not.toContain(user.key);
  });
});
