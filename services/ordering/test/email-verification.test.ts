/**
 * E-mail changes follow a verified mailbox (mails go through the outbox to a real SMTP server): a
 * customer who claims another address (even with its case changed) gets nothing of its licenses, the
 * address stays free for its owner, and `users/update-profile` answers the same for a taken and a free
 * address, so it does not tell whether an address is registered.
 */
import request from 'supertest';
import { createLogger } from '@sports-timing/shared';
import { smtpMailer } from '../src/mail/mailer';
import { OutboxDispatcher } from '../src/outbox/outbox.service';
import { ADMIN_PASSWORD, bearerOf, createUser, startIdentity, type IdentityTestContext } from './support/identity';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from './support/smtp';
import { testTime } from '@sports-timing/shared/src/test-time';

const PW = 'verification-password-1';
const L = '/api/rest/v1/licensing';
const PROFILE = '/api/rest/v1/users/update-profile';
const VERIFY = '/api/rest/v1/users/verify-email';

let ctx: IdentityTestContext;
let smtp: TestSmtp;
let dispatcher: OutboxDispatcher;
let admin: string;
let mallory: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  ctx = await startIdentity({ SMTP_URL: smtp.url });
  dispatcher = new OutboxDispatcher({
    database: ctx.database,
    mailer: smtpMailer(smtp.url),
    logger: createLogger('verification-test'),
    from: 'Shop <shop@example.com>',
    pollIntervalMs: 50,
  });
  dispatcher.start();
  admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
  await createUser(ctx.app, admin, { userName: 'mallory', email: 'mallory@example.com', password: PW });
  mallory = await bearerOf(ctx.app, 'mallory', PW);
});
afterAll(async () => {
  await dispatcher.stop();
  await smtp.stop();
  await ctx.close();
});

/** The newest mail delivered to `address` (waits for it). */
async function mailTo(address: string, timeoutMs = 10_000): Promise<ReceivedMail> {
  const until = Date.now() + testTime(timeoutMs);
  for (;;) {
    const found = [...smtp.received].reverse().find((m) => m.envelopeTo.some((t) => t.toLowerCase() === address.toLowerCase()));
    if (found) return found;
    if (Date.now() > until) throw new Error(`no mail to ${address}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const codeIn = (mail: ReceivedMail) => /\bev_[A-Za-z0-9_-]{43}\b/.exec(mail.parsed.text ?? '')?.[0];

describe('license theft by claiming an address', () => {
  it('a changed address (case changed) grants nothing until verified, and the owner can still register and verify it', async () => {
    await request(ctx.app).post(`${L}/create-licenses`).query({ product: 'resultsManager', numberOfLicenses: 1 }).set('authorization', admin).expect(200);
    const license = (
      await request(ctx.app)
        .post(`${L}/assign-license`)
        .set('authorization', admin)
        .send({ product: 'resultsManager', email: 'victim@example.com' })
        .expect(200)
    ).body;

    // The attack: Mallory claims the victim's address with another case.
    const res = await request(ctx.app).post(PROFILE).set('authorization', mallory).send({ email: 'Victim@Example.com' }).expect(200);
    expect(res.body).toMatchObject({ email: 'mallory@example.com', emailVerified: false });
    for (const query of [{}, { email: 'victim@example.com' }, { email: 'Victim@Example.com' }]) {
      const list = await request(ctx.app).get(`${L}/licenses`).query(query).set('authorization', mallory).expect(404);
      expect(JSON.stringify(list.body)).not.toContain(license.secret);
    }
    await request(ctx.app)
      .post(`${L}/request-license-key`)
      .set('authorization', mallory)
      .send({ product: 'resultsManager', email: 'Victim@Example.com' })
      .expect(404);
    const info = (await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', mallory).expect(200)).body;
    expect(info).toMatchObject({ email: 'mallory@example.com', email_verified: false });
    // A guessed code does nothing.
    const guess = await request(ctx.app)
      .post(VERIFY)
      .send({ token: `ev_${'A'.repeat(43)}` })
      .expect(400);
    expect(guess.body.errors.token).toBeDefined();

    // The code went to the victim's mailbox, not to Mallory.
    const mail = await mailTo('victim@example.com');
    expect(mail.parsed.subject).toBe('Confirm your e-mail address');
    expect(codeIn(mail)).toBeDefined();
    // The pending change reserves nothing: the victim gets an account with the address …
    await createUser(ctx.app, admin, { userName: 'victim', email: 'victim@example.com', password: PW });
    const victim = await bearerOf(ctx.app, 'victim', PW);
    // … and, once the victim verified it, sees the license; Mallory's stale code cannot take it over.
    await request(ctx.app).post(PROFILE).set('authorization', victim).send({ email: 'victim@example.com' }).expect(200);
    const own = await waitForCode('victim@example.com', codeIn(mail));
    await request(ctx.app).post(VERIFY).send({ token: own }).expect(200);
    const mine = (await request(ctx.app).get(`${L}/licenses`).set('authorization', victim).expect(200)).body;
    expect(mine.map((l: { licenseId: string }) => l.licenseId)).toEqual([license.licenseId]);
    const late = await request(ctx.app)
      .post(VERIFY)
      .send({ token: codeIn(mail) })
      .expect(409);
    expect(late.body.status).toBe(409);
    expect((await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', mallory).expect(200)).body.email).toBe('mallory@example.com');
  });

  it('a change to an own new address takes effect with the mailed code, once', async () => {
    await request(ctx.app).post(PROFILE).set('authorization', mallory).send({ email: 'mallory.new@example.com' }).expect(200);
    const code = codeIn(await mailTo('mallory.new@example.com'));
    const [a, b] = await Promise.all([request(ctx.app).post(VERIFY).send({ token: code }), request(ctx.app).post(VERIFY).send({ token: code })]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    const ok = a.status === 200 ? a : b;
    expect(ok.body).toMatchObject({ userName: 'mallory', email: 'mallory.new@example.com', emailVerified: true });
  });
});

/** A code mailed to `address` other than `not` (waits for the newer mail). */
async function waitForCode(address: string, not: string | undefined): Promise<string> {
  const until = Date.now() + testTime(10_000);
  for (;;) {
    const code = [...smtp.received]
      .reverse()
      .filter((m) => m.envelopeTo.includes(address))
      .map(codeIn)
      .find((c) => c && c !== not);
    if (code) return code;
    if (Date.now() > until) throw new Error(`no new code to ${address}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('update-profile is no registered-address oracle', () => {
  it('answers a taken and a free address alike; the taken address is told so by mail', async () => {
    await createUser(ctx.app, admin, { userName: 'taken', email: 'taken@example.com', password: PW });
    await createUser(ctx.app, admin, { userName: 'prober', email: 'prober@example.com', password: PW });
    const prober = await bearerOf(ctx.app, 'prober', PW);
    const shape = (r: request.Response) => ({ status: r.status, type: r.headers['content-type'], body: { ...r.body, updatedAt: undefined } });
    const taken = await request(ctx.app).post(PROFILE).set('authorization', prober).send({ email: 'TAKEN@example.com' });
    const free = await request(ctx.app).post(PROFILE).set('authorization', prober).send({ email: 'free-address@example.com' });
    expect(shape(taken)).toEqual(shape(free));
    expect(taken.status).toBe(200);
    const notice = await mailTo('TAKEN@example.com');
    expect(notice.parsed.subject).toBe('This e-mail address already has an account');
    expect(codeIn(notice)).toBeUndefined();
    expect(codeIn(await mailTo('free-address@example.com'))).toBeDefined();
  });
});
