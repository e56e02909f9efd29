/**
 * Login and password-guessing abuse against a real server: the failed-login limit is atomic (an attempt
 * is reserved before the password is hashed), counted per account whatever alias (user name or e-mail, any
 * case) is used and per IP address; `users/update-profile` current-password checks share that limit; and
 * password hashing is bounded, so a burst of logins at the production hash cost never makes an unrelated
 * request wait behind it.
 */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { Server } from 'node:http';
import request from 'supertest';
import { hashPassword } from '../src/identity/passwords';
import { ADMIN_PASSWORD, bearerOf, createUser, startIdentity, type IdentityTestContext } from './support/identity';
import { testTime } from '@sports-timing/shared/src/test-time';

const TOKEN = '/api/rest/v1/auth/token';
const PW = 'abuse-test-password-1';

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});

describe('failed-login limits under parallel attempts', () => {
  let ctx: IdentityTestContext;
  let admin: string;
  beforeAll(async () => {
    // A hashing queue long enough that no attempt is turned away as "busy": this test is about the counters.
    ctx = await startIdentity({
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '5',
      LOGIN_MAX_FAILURES_PER_IP: '50',
      PASSWORD_HASH_QUEUE: '500',
      TRUSTED_PROXIES: 'loopback',
    });
    admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
    await createUser(ctx.app, admin, { userName: 'victim', email: 'victim@example.com', password: PW });
  });
  afterAll(async () => ctx.close());

  it('40 parallel wrong passwords for one account, by user name and e-mail in any case: at most 5 answered 400, the rest 429', async () => {
    const aliases = ['victim', 'VICTIM', 'victim@example.com', 'Victim@Example.COM'];
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        request(ctx.app)
          .post(TOKEN)
          .type('form')
          .send({ grant_type: 'password', username: aliases[i % aliases.length], password: `wrong-guess-${i}-x` })
          .then((r) => r.status),
      ),
    );
    const t = tally(statuses);
    process.stdout.write(`40 parallel wrong passwords, one account: ${JSON.stringify(t)}\n`);
    expect(t[400] ?? 0).toBeLessThanOrEqual(5);
    expect((t[400] ?? 0) + (t[429] ?? 0)).toBe(40);
    // The owner, from another source, is not locked out by the burst (see the locker tests below).
    await request(ctx.app)
      .post(TOKEN)
      .type('form')
      .set('X-Forwarded-For', '198.51.100.7')
      .send({ grant_type: 'password', username: 'VICTIM@example.com', password: PW })
      .expect(200);
  });

  it('150 parallel wrong logins from one IP address: at most the IP limit answered 400, the rest 429', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        request(ctx.app)
          .post(TOKEN)
          .type('form')
          .send({ grant_type: 'password', username: `nobody-${i}`, password: 'wrong-password-x' })
          .then((r) => r.status),
      ),
    );
    const t = tally(statuses);
    process.stdout.write(`150 parallel wrong logins, one IP: ${JSON.stringify(t)}\n`);
    expect(t[400] ?? 0).toBeLessThanOrEqual(50);
    expect((t[400] ?? 0) + (t[429] ?? 0)).toBe(150);
    expect(t[429]).toBeGreaterThanOrEqual(100);
  });
});

describe('lockout without denial of service: per account and source, growing delays (OWASP)', () => {
  let ctx: IdentityTestContext;
  const login = (ip: string, username: string, password: string) =>
    request(ctx.app).post(TOKEN).type('form').set('X-Forwarded-For', ip).send({ grant_type: 'password', username, password });
  beforeAll(async () => {
    ctx = await startIdentity({
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '5',
      LOGIN_MAX_FAILURES_PER_IP: '1000',
      LOGIN_MAX_FAILURES_PER_ACCOUNT_ALL_SOURCES: '20',
      PASSWORD_HASH_QUEUE: '500',
      TRUSTED_PROXIES: 'loopback',
    });
    const admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
    await createUser(ctx.app, admin, { userName: 'owner', email: 'owner@example.com', password: PW });
    await createUser(ctx.app, admin, { userName: 'target', email: 'target@example.com', password: PW });
  });
  afterAll(async () => ctx.close());

  it('the guesser: 5 free attempts, then each one waits longer (1 s, 2 s, …) with 429 and Retry-After, before any password work', async () => {
    const ip = '203.0.113.1';
    for (let i = 0; i < 5; i++) await login(ip, 'owner', `guess-${i}-xx`).expect(400);
    const first = await login(ip, 'owner', 'guess-5-xx').expect(429);
    expect(Number(first.headers['retry-after'])).toBe(1);
    // Even the right password waits: the source is the guesser's.
    await login(ip, 'owner', PW).expect(429);
    await new Promise((r) => setTimeout(r, 1100));
    await login(ip, 'owner', 'guess-6-xx').expect(400);
    const second = await login(ip, 'owner', 'guess-7-xx').expect(429);
    expect(Number(second.headers['retry-after'])).toBe(2);
    await new Promise((r) => setTimeout(r, 2100));
    await login(ip, 'owner', 'guess-8-xx').expect(400);
    const third = await login(ip, 'owner', 'guess-9-xx').expect(429);
    expect(Number(third.headers['retry-after'])).toBe(4);
  });

  it('the locker: while one source hammers the account, its owner logs in from a fresh source (and admin too)', async () => {
    const hammer = await Promise.all(
      Array.from({ length: 60 }, (_, i) => login('203.0.113.2', i % 2 ? 'owner' : 'admin', `lock-${i}-xx`).then((r) => r.status)),
    );
    expect(hammer.filter((s) => s === 400).length).toBeLessThanOrEqual(10);
    expect(hammer.every((s) => s === 400 || s === 429)).toBe(true);
    await login('198.51.100.20', 'OWNER@example.com', PW).expect(200);
    await login('198.51.100.21', 'admin', ADMIN_PASSWORD).expect(200);
  });

  it('many sources against one account: past the account-wide budget every source waits after one failure, a fresh source still gets in', async () => {
    // 5 sources × 4 failures = 20 (the account-wide budget) without any source reaching its own delays.
    for (let s = 0; s < 5; s++) for (let i = 0; i < 4; i++) await login(`192.0.2.${s + 1}`, 'target', `spray-${s}-${i}-x`).expect(400);
    await login('192.0.2.50', 'target', 'spray-fresh-x').expect(400);
    const delayed = await login('192.0.2.50', 'target', 'spray-fresh-y').expect(429);
    expect(Number(delayed.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Negative control: a source with 4 failures before the account-wide budget was spent is delayed now too.
    await login('192.0.2.1', 'target', 'spray-again-x').expect(400);
    await login('192.0.2.1', 'target', 'spray-again-y').expect(429);
    await login('192.0.2.99', 'target', PW).expect(200);
  });
});

describe('current-password guessing through users/update-profile', () => {
  let ctx: IdentityTestContext;
  let stolen: string;
  beforeAll(async () => {
    ctx = await startIdentity({ LOGIN_MAX_FAILURES_PER_ACCOUNT: '5', LOGIN_MAX_FAILURES_PER_IP: '1000', PASSWORD_HASH_QUEUE: '500' });
    const admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
    await createUser(ctx.app, admin, { userName: 'owner', email: 'owner@example.com', password: PW });
    stolen = await bearerOf(ctx.app, 'owner', PW);
  });
  afterAll(async () => ctx.close());

  it('100 parallel guesses with a stolen access token: at most 5 answered 400, the rest 429; the password stays unchanged', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        request(ctx.app)
          .post('/api/rest/v1/users/update-profile')
          .set('authorization', stolen)
          .send({ currentPassword: `guess-number-${i}`, newPassword: 'attacker-password-1' })
          .then((r) => r.status),
      ),
    );
    const t = tally(statuses);
    process.stdout.write(`100 parallel current-password guesses: ${JSON.stringify(t)}\n`);
    expect(t[400] ?? 0).toBeLessThanOrEqual(5);
    expect((t[400] ?? 0) + (t[429] ?? 0)).toBe(100);
    // The same counter as the logins: the account is locked for the password grant too.
    await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'password', username: 'owner', password: PW }).expect(429);
    const res = await request(ctx.app)
      .post('/api/rest/v1/users/update-profile')
      .set('authorization', stolen)
      .send({ currentPassword: PW, newPassword: 'attacker-password-1' });
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('password hashing at capacity', () => {
  let ctx: IdentityTestContext;
  beforeAll(async () => {
    ctx = await startIdentity({
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '5',
      LOGIN_MAX_FAILURES_PER_IP: '1000',
      PASSWORD_HASH_CONCURRENCY: '1',
      PASSWORD_HASH_QUEUE: '0',
    });
    // A production-cost hash (~0.3 s): while one check runs, the others find the gate full.
    const hash = await hashPassword(PW, { ln: 17, r: 8, p: 1 });
    await ctx.database.db.insertInto('users').values({ user_name: 'busy', email: 'busy@example.com', password_hash: hash }).execute();
  });
  afterAll(async () => ctx.close());

  it('turns password checks beyond the gate away with 503 and Retry-After, without counting them as attempts', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(ctx.app)
          .post(TOKEN)
          .type('form')
          .send({ grant_type: 'password', username: 'busy', password: `wrong-guess-${i}-x` }),
      ),
    );
    const t = tally(results.map((r) => r.status));
    expect((t[400] ?? 0) + (t[503] ?? 0)).toBe(20);
    expect(t[503] ?? 0).toBeGreaterThanOrEqual(5);
    for (const r of results.filter((x) => x.status === 503)) {
      expect(r.headers['retry-after']).toBe('1');
      expect(r.body).toMatchObject({ status: 503 });
    }
    // Only the checked attempts count: fewer than 5, so the right password still works.
    expect(t[400]).toBeLessThan(5);
    await request(ctx.app).post(TOKEN).type('form').send({ grant_type: 'password', username: 'busy', password: PW }).expect(200);
  });
});

/** The answers to 150 parallel wrong-password logins (spread over `accounts` accounts), sent by a child process. */
async function burstFromChildProcess(base: string, accounts: number, first = 0): Promise<Array<{ status: number; retryAfter: string | null; body: string }>> {
  const script = `
    const [base, accounts, first] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
    Promise.all(Array.from({ length: 150 }, (_, i) =>
      fetch(base + '${TOKEN}', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: 'burst-' + (first + (i % accounts)), password: 'wrong-' + i + '-password' }),
      }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.text() })),
    )).then((rs) => process.stdout.write(JSON.stringify(rs)));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script, base, String(accounts), String(first)], { maxBuffer: 10 * 1024 * 1024 });
  return JSON.parse(stdout);
}

/** Percentile `p` (0–100) of the values, nearest-rank. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

describe('a login burst at the production hash cost does not starve other requests', () => {
  let ctx: IdentityTestContext;
  let server: Server;
  let base: string;
  const ACCOUNTS = 30;
  beforeAll(async () => {
    // The IP limit is raised so that every one of the 150 attempts reaches the password check: the burst a
    // botnet (many addresses) would cause. Accounts get hashes at the production cost (ln=17, 128 MiB),
    // whatever PASSWORD_HASH_COST_LN the test run uses, since hashes are self-describing.
    // Logs at info, as in production (debug lines of every request would measure the test's log sink).
    ctx = await startIdentity({ LOGIN_MAX_FAILURES_PER_ACCOUNT: '5', LOGIN_MAX_FAILURES_PER_IP: '100000' }, { logLevel: 'info' });
    const hash = await hashPassword(PW, { ln: 17, r: 8, p: 1 });
    await ctx.database.db
      .insertInto('users')
      .values(Array.from({ length: ACCOUNTS }, (_, i) => ({ user_name: `burst-${i}`, email: `burst-${i}@example.com`, password_hash: hash })))
      .execute();
    server = ctx.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await ctx.close();
  });

  /**
   * Latencies (ms) of unrelated requests, a small JSON answer and a large gzip-compressed one, sent one after
   * another until `stop()` and at least `min` times; `beforeStop`: how many were answered while `stop()` was false.
   */
  async function sampleUnrelated(stop: () => boolean, min: number): Promise<{ latencies: number[]; beforeStop: number }> {
    const latencies: number[] = [];
    let beforeStop = 0;
    while (!stop() || latencies.length < min) {
      for (const path of ['/api/rest/v1/version', '/openapi.json']) {
        const t0 = performance.now();
        const r = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'gzip' } });
        await r.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (!stop()) beforeStop++;
        expect(r.status).toBe(200);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    return { latencies, beforeStop };
  }

  it(
    '150 parallel logins: unrelated requests keep being answered during the burst; logins beyond the hashing queue get a fast 503 with Retry-After',
    async () => {
      // Warm up (first calls compile validators and build the spec document), as a running service is.
      await request(server).post(TOKEN).type('form').send({ grant_type: 'password', username: 'burst-0', password: PW }).expect(200);
      // The same requests without a burst: what the machine gives right now (printed beside the burst's).
      const quietUntil = Date.now() + 3_000;
      const baseline = percentile((await sampleUnrelated(() => Date.now() > quietUntil, 40)).latencies, 99);
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      const started = Date.now();
      // The burst comes from another process, as it would: the server's event loop serves requests only.
      const all = burstFromChildProcess(base, ACCOUNTS, 0);
      let done = false;
      void all.finally(() => (done = true));
      const { latencies, beforeStop } = await sampleUnrelated(() => done, 40);
      const results = await all;
      loop.disable();
      const t = tally(results.map((r) => r.status));
      // Latencies are measured here and printed (RELIABILITY.md), not bounded: a wall-clock bound fails on a busy
      // machine. What is asserted is the shape of the answers. When every hash queued in libuv's pool, the
      // compression of unrelated answers waited behind all 150 of them. Then each unrelated request took as long
      // as the whole burst, and at most one or two were answered before it ended.
      process.stdout.write(
        `login burst: ${JSON.stringify(t)}, ${latencies.length} unrelated requests (${beforeStop} answered during the burst), p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms (without the burst: p99 ${baseline.toFixed(1)} ms); ` +
          `event loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms; burst over after ${Date.now() - started} ms\n`,
      );
      expect(beforeStop).toBeGreaterThanOrEqual(10);
      expect((t[400] ?? 0) + (t[503] ?? 0)).toBe(150);
      expect(t[503] ?? 0).toBeGreaterThan(0);
      for (const r of results.filter((x) => x.status === 503)) {
        expect(Number(r.retryAfter)).toBeGreaterThan(0);
        expect(JSON.parse(r.body)).toMatchObject({ status: 503 });
      }
    },
    testTime(240_000),
  );
});
