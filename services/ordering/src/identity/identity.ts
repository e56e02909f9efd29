/**
 * The identity area's services for one app instance (built once by `composeOrdering`, shared by the auth,
 * users, licensing and dev handlers and by the access checks in `app.ts`), so that the login limiter, caches
 * and the Redis connection exist once.
 */
import path from 'node:path';
import type { Redis } from 'ioredis';
import { devSecret, type Database } from '@sports-timing/shared';
import type { TokenService } from '../auth/tokens';
import type { OrderingConfig } from '../config';
import type { DB } from '../db/schema';
import { AccessCheck } from './access';
import { AuthService } from './auth.service';
import { HashGate } from './hash-gate';
import { generateLicenseSigningKeyPem, LicenseSigner } from './license-keys';
import { LicensingService } from './licensing.service';
import { createLimiter, createRedis, LoginLimiter } from './login-limits';
import { ServiceClientsService } from './service-clients.service';
import { UsersService } from './users.service';

/** The identity services of one app. */
export interface Identity {
  users: UsersService;
  auth: AuthService;
  clients: ServiceClientsService;
  access: AccessCheck;
  /** Created on first use: it reads (or, in development, creates) the license keys. */
  readonly licensing: LicensingService;
  readonly licenseSigner: LicenseSigner;
  /** The app's Redis connection for shared rate limits (`REDIS_URL`); undefined → in-memory limits. */
  redis: Redis | undefined;
}

/**
 * Builds the identity services of one app (the composition root, `composeOrdering`, calls it once per app):
 * with `config.redisUrl` this opens the Redis connection of the shared rate limits, which the root closes.
 */
export function createIdentity(deps: { config: OrderingConfig; database: Database<DB>; tokens: TokenService }): Identity {
  const { config, database } = deps;
  const redis: Redis | undefined = config.redisUrl ? createRedis(config.redisUrl) : undefined;
  const access = new AccessCheck(database);
  const limiter = new LoginLimiter({
    maxFailuresPerAccount: config.loginMaxFailuresPerAccount,
    maxFailuresPerIp: config.loginMaxFailuresPerIp,
    maxFailuresPerAccountAllSources: config.loginMaxFailuresPerAccountAllSources,
    redis,
    prefix: config.rateLimitKeyPrefix,
  });
  const hashing = new HashGate(config.passwordHashConcurrency, config.passwordHashQueue);
  const users = new UsersService(database, {
    limiter,
    hashing,
    verificationMailLimiter: createLimiter(redis, { keyPrefix: `${config.rateLimitKeyPrefix}:email-verification`, points: 5, duration: 3600 }),
    publicBaseUrl: config.publicBaseUrl,
  });
  const auth = new AuthService(database, deps.tokens, limiter, hashing);
  const clients = new ServiceClientsService(database);
  const keysDir = path.join(config.dataDir, 'keys');
  let signer: LicenseSigner | undefined;
  let licensing: LicensingService | undefined;
  const signerOf = () => (signer ??= new LicenseSigner(devSecret(keysDir, 'license-ed25519.pem', config.licenseSigningKeyPem, generateLicenseSigningKeyPem)));
  return {
    users,
    auth,
    clients,
    access,
    redis,
    get licenseSigner() {
      return signerOf();
    },
    get licensing() {
      return (licensing ??= new LicensingService({
        database,
        signer: signerOf(),
        secretKey: devSecret(keysDir, 'license-secret.key', config.licenseSecretKey),
        keyRequestLimiter: createLimiter(redis, { keyPrefix: `${config.rateLimitKeyPrefix}:license-key`, points: 10, duration: 3600 }),
      }));
    },
  };
}
