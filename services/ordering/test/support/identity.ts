/**
 * Test support of the identity area: an app with the bootstrap admin, license keys from the environment
 * (so tests never write development keys), real logins through the token endpoint, and captured logs.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import pino from 'pino';
import request from 'supertest';
import type { components } from '../../src/generated/openapi';
import { bootstrapAdmin } from '../../src/identity/bootstrap';
import { startOrdering, type OrderingTestContext } from './app';

/** Password of the bootstrap admin in tests. */
export const ADMIN_PASSWORD = 'admin-password-for-tests-1';

/** A started app with its captured log lines. */
export interface IdentityTestContext extends OrderingTestContext {
  logs: string[];
}

/**
 * Starts the app with the bootstrap admin and captured logs (at `logLevel`, default debug); `env`
 * overrides configuration.
 */
export async function startIdentity(env: Record<string, string> = {}, opts: { logLevel?: string } = {}): Promise<IdentityTestContext> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString('utf8'));
      cb();
    },
  });
  const logger = pino({ level: opts.logLevel ?? 'debug', redact: { paths: ['req.headers.authorization', 'password', 'token'], censor: '***' } }, sink);
  const ctx = await startOrdering(
    {
      LICENSE_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      LICENSE_SECRET_KEY: randomBytes(32).toString('base64url'),
      BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
      ...env,
    },
    { logger },
  );
  await bootstrapAdmin({ database: ctx.database, config: ctx.deps.config, logger });
  return { ...ctx, logs };
}

/** A token response of the spec. */
export type TokenResponse = components['schemas']['TokenResponse'];

/** Logs in through the password grant (form-encoded) and returns the token response; fails on non-200. */
export async function login(app: Express, username: string, password: string): Promise<TokenResponse> {
  const res = await request(app).post('/api/rest/v1/auth/token').type('form').send({ grant_type: 'password', username, password });
  if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as TokenResponse;
}

/** `Bearer <access token>` of a login. */
export async function bearerOf(app: Express, username: string, password: string): Promise<string> {
  return `Bearer ${(await login(app, username, password)).access_token}`;
}

/** A `NewUser` of the spec as a client sends it (fields with defaults may be left out). */
export type NewUser = Omit<components['schemas']['NewUser'], 'culture' | 'roles' | 'isActive'> &
  Partial<Pick<components['schemas']['NewUser'], 'culture' | 'roles' | 'isActive'>>;
/** A `User` of the spec. */
export type User = components['schemas']['User'];

/** Creates a user through the API as the given admin; fails on non-200. */
export async function createUser(app: Express, adminBearer: string, user: NewUser): Promise<User> {
  const res = await request(app).post('/api/rest/v1/users').set('authorization', adminBearer).send(user);
  if (res.status !== 200) throw new Error(`create ${user.userName} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as User;
}

/** The code of the newest verification mail to `email` still waiting in the outbox. */
async function verificationCodeFor(ctx: OrderingTestContext, email: string): Promise<string | undefined> {
  const rows = await ctx.database.db
    .selectFrom('outbox_messages')
    .select('payload')
    .where('dedupe_key', 'like', 'email-verification:%')
    .orderBy('id', 'desc')
    .execute();
  for (const { payload } of rows) {
    const mail = (typeof payload === 'string' ? JSON.parse(payload) : payload) as { to: string; text: string };
    if (mail.to.toLowerCase() !== email.toLowerCase()) continue;
    return /\bev_[A-Za-z0-9_-]{43}\b/.exec(mail.text)?.[0];
  }
  return undefined;
}

/**
 * Confirms the caller's current e-mail address as a user does: asks `users/update-profile` for the
 * verification mail and presents its code (read from the outbox) to `users/verify-email`.
 */
export async function verifyOwnEmail(ctx: OrderingTestContext, bearer: string): Promise<void> {
  const me = (await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', bearer).expect(200)).body as { email: string };
  await request(ctx.app).post('/api/rest/v1/users/update-profile').set('authorization', bearer).send({ email: me.email }).expect(200);
  const token = await verificationCodeFor(ctx, me.email);
  if (!token) throw new Error(`no verification mail to ${me.email}`);
  await request(ctx.app).post('/api/rest/v1/users/verify-email').send({ token }).expect(200);
}
