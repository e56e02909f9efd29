/**
 * Test support of the identity area: an app with the bootstrap admin, license keys from the environment
 * (so tests never write development keys), real logins through the token endpoint, and captured logs.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Express } from 'express';
import pino from 'pino';
import request from 'supertest';
import type { components } from '../src/generated/openapi';
import { bootstrapAdmin } from '../src/identity/bootstrap';
import { startOrdering, type OrderingTestContext } from './helpers';

/** Password of the bootstrap admin in tests. */
export const ADMIN_PASSWORD = 'admin-password-for-tests-1';

/** A started app with its captured log lines. */
export interface IdentityTestContext extends OrderingTestContext {
  logs: string[];
}

/** Starts the app with the bootstrap admin and captured logs; `env` overrides configuration. */
export async function startIdentity(env: Record<string, string> = {}): Promise<IdentityTestContext> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString('utf8'));
      cb();
    },
  });
  const logger = pino({ level: 'debug', redact: { paths: ['req.headers.authorization', 'password', 'token'], censor: '***' } }, sink);
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
export type NewUser = Omit<components['schemas']['NewUser'], 'culture' | 'roles' | 'isActive'> & Partial<Pick<components['schemas']['NewUser'], 'culture' | 'roles' | 'isActive'>>;
/** A `User` of the spec. */
export type User = components['schemas']['User'];

/** Creates a user through the API as the given admin; fails on non-200. */
export async function createUser(app: Express, adminBearer: string, user: NewUser): Promise<User> {
  const res = await request(app).post('/api/rest/v1/users').set('authorization', adminBearer).send(user);
  if (res.status !== 200) throw new Error(`create ${user.userName} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as User;
}
