/**
 * Ordering service configuration from the environment (docs/decisions.md §3). Throws ConfigError on bad values.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import {
  appEnvironmentFromEnv,
  checkHost,
  ConfigError,
  DEV_ERP_WEBHOOK_SECRET,
  type AppEnvironment,
  envReader,
  loadProcessConfig,
  parseCorsOrigins,
  parseTrustedProxies,
} from '@sports-timing/shared';

/** Resolved configuration of the ordering service. */
export interface OrderingConfig {
  /** Deployment name shown by `dev/environment` (`APP_ENV`: development, test, staging, production). */
  environment: AppEnvironment;
  port: number;
  host: string;
  /** postgres:// URL; undefined → embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | undefined;
  /** Working data directory (embedded database, dev keys, `.eml` mail drop). */
  dataDir: string;
  /** Port of the embedded PostgreSQL started when no database URL is set (`EMBEDDED_PG_PORT`, default 5442). */
  embeddedPgPort: number;
  /** `smtp://` or `smtps://` URL; undefined → messages written as `.eml` files under `<dataDir>/mail`. */
  smtpUrl: string | undefined;
  /** Sender address of outgoing e-mail. */
  mailFrom: string;
  /** Password of the bootstrap `admin` user on a fresh database; generated in development when unset. */
  bootstrapAdminPassword: string | undefined;
  /** JWT issuer (`iss`) and audience (`aud`) of access tokens. */
  jwtIssuer: string;
  jwtAudience: string;
  /** Access-token lifetime in seconds. */
  accessTokenTtlSeconds: number;
  /** Ed25519 private key (PKCS#8 PEM) signing access tokens; generated into `.data/keys` in development. */
  jwtPrivateKeyPem: string | undefined;
  /** Additional public keys (SPKI PEM, concatenated) still accepted for verification during a key rotation. */
  jwtPreviousPublicKeysPem: string | undefined;
  /** Ed25519 private key (PKCS#8 PEM) signing license keys (`requestLicenseKey`); generated into `.data/keys` in development. */
  licenseSigningKeyPem: string | undefined;
  /** Secret (≥ 32 characters) from which license secrets are derived (tag `licensing`); generated into `.data/keys` in development. */
  licenseSecretKey: string | undefined;
  /** Password attempts per account and client IP address (1-hour window) before growing delays (429) start. */
  loginMaxFailuresPerAccount: number;
  /** Failed logins of one account from all sources in an hour before every source is delayed after one attempt. */
  loginMaxFailuresPerAccountAllSources: number;
  /** Failed logins per client IP address (1-hour window) before the token endpoint answers 429. */
  loginMaxFailuresPerIp: number;
  /** Password hashes running at once (`PASSWORD_HASH_CONCURRENCY`; default one less than the CPU count, 1–2). */
  passwordHashConcurrency: number;
  /** Password checks waiting for a hashing slot (`PASSWORD_HASH_QUEUE`, default 8); beyond it 503 with `Retry-After`. */
  passwordHashQueue: number;
  /** Redis URL for shared rate limits and flags across instances; in-memory when unset. */
  redisUrl: string | undefined;
  /** Prefix of rate-limit counter keys in Redis (`RATE_LIMIT_KEY_PREFIX`, default `ordering`). */
  rateLimitKeyPrefix: string;
  /**
   * Requests per minute per caller (`requestCaller`: principal, else IP address, a registered client id naming a
   * budget per address) of order creation (`createOrder`, `createShopOrder`; `RATE_LIMIT_ORDERS_PER_MINUTE`),
   * discount-code validation (`RATE_LIMIT_DISCOUNT_VALIDATIONS_PER_MINUTE`) and the battery lookup
   * (`RATE_LIMIT_BATTERY_LOOKUPS_PER_MINUTE`); 0 disables a limit. Over it: 429 with `Retry-After`.
   */
  rateLimitOrdersPerMinute: number;
  rateLimitDiscountValidationsPerMinute: number;
  rateLimitBatteryLookupsPerMinute: number;
  /**
   * Payment webhook deliveries per minute per source address (`RATE_LIMIT_PAYMENT_WEBHOOKS_PER_MINUTE`,
   * default 600; 0 disables). The endpoint is public and each new delivery costs a provider call.
   */
  rateLimitPaymentWebhooksPerMinute: number;
  /**
   * Re-fetches per instance and minute of transactions no delivery has led to an order yet
   * (`PAYMENT_UNKNOWN_REFETCHES_PER_MINUTE`, default 120; 0 = off); beyond, their jobs are retried later.
   */
  paymentUnknownRefetchesPerMinute: number;
  /** Days a recorded payment webhook delivery is kept (`PAYMENT_DELIVERY_RETENTION_DAYS`, default 90). */
  paymentDeliveryRetentionDays: number;
  /**
   * Minutes a `pending_payment` order waits for its payment before it is cancelled as `expired`, its card
   * numbers and discount uses released and its paylink deleted (`ORDER_PAYMENT_EXPIRY_MINUTES`, default
   * 1440 = 24 hours; README "Unpaid orders expire").
   */
  orderPaymentExpiryMinutes: number;
  /** Seconds between two expiry sweeps of an instance (`ORDER_EXPIRY_SWEEP_SECONDS`, default 60). */
  orderExpirySweepSeconds: number;
  /**
   * Minutes an unpaid order without a payment on its way holds its discount codes' uses before they go back
   * to the pool (`DISCOUNT_HOLD_MINUTES`, default 60; ordering README "Discount uses of unpaid orders").
   */
  discountHoldMinutes: number;
  /**
   * Whether the shop takes real money (`PAYMENT_MODE`: `LIVE` or `TEST`; default `LIVE` with
   * `APP_ENV=production`, else `TEST`). `LIVE`: a provider transaction in `TEST` mode never pays an order,
   * it is flagged for an operator (docs/payrexx.md "TEST and LIVE").
   */
  paymentMode: 'TEST' | 'LIVE';
  /** Most card numbers one order of a `public` caller may reserve (`ORDER_MAX_CARDS_PUBLIC`, default 100; `orders/placement/order-limits.ts`). */
  orderMaxCardsPublic: number;
  /** Orders per `public` caller and hour (`ORDER_PUBLIC_ORDERS_PER_CALLER_PER_HOUR`, default 60; 0 = off). */
  orderPublicOrdersPerCallerPerHour: number;
  /** Card numbers reserved per `public` caller and hour (`ORDER_PUBLIC_CARDS_PER_CALLER_PER_HOUR`, default 300; 0 = off). */
  orderPublicCardsPerCallerPerHour: number;
  /**
   * Orders and card numbers per hour of one authenticated `client_credentials` client of group `public`, shared
   * by all its customers (`ORDER_CLIENT_ORDERS_PER_HOUR`, default 600; `ORDER_CLIENT_CARDS_PER_HOUR`, default
   * 3000; 0 = off; `orders/placement/order-limits.ts`).
   */
  orderClientOrdersPerHour: number;
  orderClientCardsPerHour: number;
  /** Orders and quotation requests mailed to one address per hour (`ORDER_MAILS_PER_RECIPIENT_PER_HOUR`, default 10; 0 = off). */
  orderMailsPerRecipientPerHour: number;
  /** Load demo data on start. */
  demoData: boolean;
  /** Bearer token `/metrics` requires (`METRICS_TOKEN`); without one, `/metrics` is open, and off in production. */
  metricsToken: string | undefined;
  /** Express `trust proxy` setting: comma list of trusted proxy addresses/subnets, or empty for none. */
  trustedProxies: string[];
  /** Browser origins allowed to call the non-public operations (`CORS_ORIGINS`, comma list: the shop and admin front ends); public reads answer any origin. */
  corsOrigins: string[];
  /**
   * AES-256-GCM key ring (`ENCRYPTION_KEYS`, `<version>:<base64 32 bytes>` comma list; the highest version
   * encrypts, all decrypt; parsed by `crypto/aead.ts`); generated into `.data/keys/encryption-keys` in development.
   */
  encryptionKeys: string | undefined;
  /** `Retry-After` (seconds) of the 503 answers of gated operations while maintenance mode is on. */
  maintenanceRetryAfterSeconds: number;
  /** ERP API base URL of tenant `weclapp` (`…/webapp/api/v1`); default the local ERP simulator. */
  erpBaseUrlWeclapp: string;
  /** ERP API base URL of tenant `weclappSandbox`; default the simulator's second tenant. */
  erpBaseUrlWeclappSandbox: string;
  /**
   * Fallback ERP API tokens per ERP system (`ERP_API_TOKEN_WECLAPP`, `ERP_API_TOKEN_WECLAPP_SANDBOX`), used while
   * no token is stored through `dev/set-erp-api-token`; in development and test they default to the ERP
   * simulator's development tokens, elsewhere to none.
   */
  erpApiTokens: { weclapp: string | undefined; weclappSandbox: string | undefined };
  /** Deadline of one ERP API attempt in ms (`ERP_TIMEOUT_MS`, default 60 s as weclapp's guide asks). */
  erpTimeoutMs: number;
  /**
   * After an unanswered sales order POST, how long (ms) no instance POSTs it again and only looks for it by its
   * reference (`ERP_CREATE_SETTLE_MS`; default 120 s: weclapp's queue of about 30 s plus processing).
   */
  erpCreateSettleMs: number;
  /** Article number of the ERP article shipping costs are booked on (`ERP_SHIPPING_ARTICLE_NUMBER`). */
  erpShippingArticleNumber: string;
  /** Interval of the periodic check of changed ERP sales orders, seconds (`ERP_SALES_ORDER_POLL_SECONDS`). */
  erpSalesOrderPollSeconds: number;
  /**
   * Secret carried in the ERP webhook URL (`ERP_WEBHOOK_SECRET`, ≥ 16 characters); in development and test a
   * fixed development value; elsewhere unset → every webhook delivery is refused (401).
   */
  erpWebhookSecret: string | undefined;
  /** Payment provider API base URL (`…/api/v1`); default the local payment simulator. */
  paymentBaseUrl: string;
  /** Payment provider instance name (query `instance`). */
  paymentInstance: string;
  /** Payment provider API key (header `X-API-KEY`); the default is the simulator's development key. */
  paymentApiKey: string;
  /** Public base URL of this service, used to build the webhook URLs given to the ERP and payment provider. */
  publicBaseUrl: string;
}

/** The payment simulator's development API key: `PAYMENT_API_KEY`'s default, refused in staging and production. */
export const DEV_PAYMENT_API_KEY = 'dev-payment-api-key';

/** The ERP simulator's development tokens: the ERP token defaults of development and test, refused elsewhere. */
export const DEV_ERP_API_TOKENS = { weclapp: 'dev-erp-token-weclapp', weclappSandbox: 'dev-erp-token-weclapp-sandbox' } as const;

/**
 * `PUBLIC_BASE_URL` when unset: this service where it listens, `http://<HOST>:<ORDERING_PORT>`; a wildcard
 * bind address (`0.0.0.0`, `::`) becomes 127.0.0.1 (no client can call a wildcard), and port 0 (an ephemeral
 * port, tests) the default 8080.
 */
function defaultPublicBaseUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port === 0 ? 8080 : port}`;
}

// Password hashing settings: read here, with the other settings, and used by identity/passwords.ts and
// identity/hash-gate.ts (the configuration sits below every domain module).

/** log2 N of the OWASP setting. */
const OWASP_LN = 17;

/**
 * log2 N of new hashes from `PASSWORD_HASH_COST_LN` (default and in production always 17, the OWASP
 * setting). Test suites lower it (jest sets 10) so that the hundreds of hashes they compute take
 * milliseconds instead of 128 MiB and ~0.3 s each; a deployment with `APP_ENV=production` refuses any
 * other value at start. Hashes stay self-describing, so a hash made at any cost verifies at that cost.
 */
export function scryptLnFromEnv(env: Record<string, string | undefined> = process.env): number {
  const raw = env.PASSWORD_HASH_COST_LN?.trim();
  if (!raw) return OWASP_LN;
  const ln = Number(raw);
  if (!/^\d{1,2}$/.test(raw) || ln < 10 || ln > 20) throw new ConfigError('PASSWORD_HASH_COST_LN', raw, 'an integer from 10 to 20');
  if (ln !== OWASP_LN && env.APP_ENV === 'production') throw new ConfigError('PASSWORD_HASH_COST_LN', raw, `unset or ${OWASP_LN} in production`);
  return ln;
}

/**
 * Default number of concurrent hashes: one core less than the machine has (at least 1, at most 2), so
 * the event loop and the rest of the thread pool keep CPU time.
 */
function defaultHashConcurrency(): number {
  return Math.max(1, Math.min(2, availableParallelism() - 1));
}

/** Reads the configuration; `env` defaults to `process.env`. */
export function loadOrderingConfig(env: Record<string, string | undefined> = process.env): OrderingConfig {
  const e = envReader(env);
  // The process-wide settings (LOG_LEVEL, HTTP_LOG, SHUTDOWN_ACCEPT_MS, GIT_COMMIT, BUILD_TIME) are checked here too,
  // so that a bad one stops the service at start with its name.
  loadProcessConfig(env);
  scryptLnFromEnv(env);
  const environment = appEnvironmentFromEnv(env);
  const local = environment === 'development' || environment === 'test';
  const erpWebhookSecret = e.string('ERP_WEBHOOK_SECRET', local ? DEV_ERP_WEBHOOK_SECRET : undefined);
  if (erpWebhookSecret !== undefined && erpWebhookSecret.length < 16) throw new ConfigError('ERP_WEBHOOK_SECRET', '***', 'a secret of at least 16 characters');
  const port = e.int('ORDERING_PORT', 8080, 0, 65535);
  const host = checkHost('HOST', e.string('HOST', '127.0.0.1')!);
  // Derived addresses follow what they derive from unless set (README "Configuration"): this service's own
  // address from HOST and ORDERING_PORT, the simulators' from their port variables.
  const erpSimulator = `http://127.0.0.1:${e.int('ERP_SIMULATOR_PORT', 8090, 1, 65535)}`;
  const paymentSimulator = `http://127.0.0.1:${e.int('PAYMENT_SIMULATOR_PORT', 8091, 1, 65535)}`;
  const secrets = {
    jwtPrivateKeyPem: e.string('JWT_PRIVATE_KEY'),
    jwtPreviousPublicKeysPem: e.string('JWT_PREVIOUS_PUBLIC_KEYS'),
    licenseSigningKeyPem: e.string('LICENSE_SIGNING_KEY'),
    licenseSecretKey: e.string('LICENSE_SECRET_KEY'),
    mailFrom: e.string('MAIL_FROM', 'Shop <shop@localhost>')!,
  };
  checkOrderingSecrets(secrets);
  return {
    ...secrets,
    bootstrapAdminPassword: e.string('BOOTSTRAP_ADMIN_PASSWORD'),
    encryptionKeys: e.string('ENCRYPTION_KEYS'),
    environment,
    port,
    host,
    databaseUrl: e.url('ORDERING_DATABASE_URL', ['postgres', 'postgresql']) ?? e.url('DATABASE_URL', ['postgres', 'postgresql']),
    dataDir: path.resolve(e.string('DATA_DIR', path.join(__dirname, '../../../.data'))!),
    embeddedPgPort: e.int('EMBEDDED_PG_PORT', 5442, 1, 65535),
    smtpUrl: e.url('SMTP_URL', ['smtp', 'smtps']),
    jwtIssuer: e.string('JWT_ISSUER', 'urn:sports-timing:ordering')!,
    jwtAudience: e.string('JWT_AUDIENCE', 'urn:sports-timing:api')!,
    accessTokenTtlSeconds: e.int('ACCESS_TOKEN_TTL_SECONDS', 900, 60, 86_400),
    loginMaxFailuresPerAccount: e.int('LOGIN_MAX_FAILURES_PER_ACCOUNT', 5, 1, 1000),
    loginMaxFailuresPerIp: e.int('LOGIN_MAX_FAILURES_PER_IP', 50, 1, 100_000),
    loginMaxFailuresPerAccountAllSources: e.int('LOGIN_MAX_FAILURES_PER_ACCOUNT_ALL_SOURCES', 100, 1, 1_000_000),
    passwordHashConcurrency: e.int('PASSWORD_HASH_CONCURRENCY', defaultHashConcurrency(), 1, 64),
    passwordHashQueue: e.int('PASSWORD_HASH_QUEUE', 8, 0, 10_000),
    redisUrl: e.url('REDIS_URL', ['redis', 'rediss']),
    rateLimitKeyPrefix: e.string('RATE_LIMIT_KEY_PREFIX', 'ordering')!,
    // Generous defaults: a school class ordering behind one NAT address must not be stopped; guessing
    // discount codes at 120/min is still hopeless against random codes.
    rateLimitOrdersPerMinute: e.int('RATE_LIMIT_ORDERS_PER_MINUTE', 1200, 0, 1_000_000),
    rateLimitDiscountValidationsPerMinute: e.int('RATE_LIMIT_DISCOUNT_VALIDATIONS_PER_MINUTE', 120, 0, 1_000_000),
    rateLimitBatteryLookupsPerMinute: e.int('RATE_LIMIT_BATTERY_LOOKUPS_PER_MINUTE', 600, 0, 1_000_000),
    // Payrexx sends a few deliveries per payment from its own addresses; 600/min per address leaves room
    // for a busy shop while a forger is held to that.
    rateLimitPaymentWebhooksPerMinute: e.int('RATE_LIMIT_PAYMENT_WEBHOOKS_PER_MINUTE', 600, 0, 1_000_000),
    // Forged deliveries with fresh transaction ids each cost a provider call: bounded for all sources together.
    paymentUnknownRefetchesPerMinute: e.int('PAYMENT_UNKNOWN_REFETCHES_PER_MINUTE', 120, 0, 1_000_000),
    paymentDeliveryRetentionDays: e.int('PAYMENT_DELIVERY_RETENTION_DAYS', 90, 1, 3650),
    // A day: the payment-link e-mail is read and paid the same or the next day; longer only lets
    // abandoned orders hold card numbers and single-use codes.
    orderPaymentExpiryMinutes: e.int('ORDER_PAYMENT_EXPIRY_MINUTES', 1440, 1, 43_200),
    orderExpirySweepSeconds: e.int('ORDER_EXPIRY_SWEEP_SECONDS', 60, 1, 3600),
    // An hour, like WooCommerce's "Hold stock" default for unpaid orders: long enough to pay by card or
    // TWINT; a code with few uses is not blocked for a day by an abandoned checkout.
    discountHoldMinutes: e.int('DISCOUNT_HOLD_MINUTES', 60, 1, 43_200),
    // Production takes real money; everywhere else the instance is a test instance (or the simulator, which
    // writes TEST transactions), so TEST payments must pay orders there.
    paymentMode: e.oneOf('PAYMENT_MODE', ['TEST', 'LIVE'] as const, environment === 'production' ? 'LIVE' : 'TEST'),
    // Anonymous callers and customers: a club's season order fits (100 cards), hoarding the number
    // range does not; staff, retailers and service clients are not limited here.
    orderMaxCardsPublic: e.int('ORDER_MAX_CARDS_PUBLIC', 100, 1, 1000),
    orderPublicOrdersPerCallerPerHour: e.int('ORDER_PUBLIC_ORDERS_PER_CALLER_PER_HOUR', 60, 0, 1_000_000),
    orderPublicCardsPerCallerPerHour: e.int('ORDER_PUBLIC_CARDS_PER_CALLER_PER_HOUR', 300, 0, 1_000_000),
    // Ten times a single caller's: a client (a club's or retailer's system) orders for its many customers.
    orderClientOrdersPerHour: e.int('ORDER_CLIENT_ORDERS_PER_HOUR', 600, 0, 1_000_000),
    orderClientCardsPerHour: e.int('ORDER_CLIENT_CARDS_PER_HOUR', 3000, 0, 1_000_000),
    orderMailsPerRecipientPerHour: e.int('ORDER_MAILS_PER_RECIPIENT_PER_HOUR', 10, 0, 1_000_000),
    demoData: e.bool('DEMO_DATA', environment !== 'production'),
    metricsToken: e.string('METRICS_TOKEN'),
    trustedProxies: parseTrustedProxies(e.string('TRUSTED_PROXIES')),
    corsOrigins: parseCorsOrigins(e.string('CORS_ORIGINS')),
    maintenanceRetryAfterSeconds: e.int('MAINTENANCE_RETRY_AFTER_SECONDS', 300, 1, 86_400),
    erpBaseUrlWeclapp: e.url('ERP_BASE_URL_WECLAPP', ['http', 'https'], `${erpSimulator}/webapp/api/v1`)!,
    erpBaseUrlWeclappSandbox: e.url('ERP_BASE_URL_WECLAPP_SANDBOX', ['http', 'https'], `${erpSimulator}/sandbox/webapp/api/v1`)!,
    erpApiTokens: {
      weclapp: e.string('ERP_API_TOKEN_WECLAPP', local ? DEV_ERP_API_TOKENS.weclapp : undefined),
      weclappSandbox: e.string('ERP_API_TOKEN_WECLAPP_SANDBOX', local ? DEV_ERP_API_TOKENS.weclappSandbox : undefined),
    },
    erpTimeoutMs: e.int('ERP_TIMEOUT_MS', 60_000, 100, 300_000),
    erpCreateSettleMs: e.int('ERP_CREATE_SETTLE_MS', 120_000, 100, 3_600_000),
    erpShippingArticleNumber: e.string('ERP_SHIPPING_ARTICLE_NUMBER', 'SHIPPING')!,
    erpSalesOrderPollSeconds: e.int('ERP_SALES_ORDER_POLL_SECONDS', 900, 10, 86_400),
    erpWebhookSecret,
    paymentBaseUrl: e.url('PAYMENT_BASE_URL', ['http', 'https'], `${paymentSimulator}/api/v1`)!,
    paymentInstance: e.string('PAYMENT_INSTANCE', 'demo')!,
    paymentApiKey: e.string('PAYMENT_API_KEY', DEV_PAYMENT_API_KEY)!,
    publicBaseUrl: e.url('PUBLIC_BASE_URL', ['http', 'https'], defaultPublicBaseUrl(host, port))!,
  };
}

// Key and address variables envReader cannot type: each stops the start with one line naming it, never the key
// itself, instead of a decoder error at start or a failure at first use. The checks that need a domain's rules
// (ENCRYPTION_KEYS, BOOTSTRAP_ADMIN_PASSWORD) are in startup-checks.ts.

/** The key variables as read from the environment (undefined = unset: generated in development). */
interface SecretValues {
  jwtPrivateKeyPem: string | undefined;
  jwtPreviousPublicKeysPem: string | undefined;
  licenseSigningKeyPem: string | undefined;
  licenseSecretKey: string | undefined;
  mailFrom: string;
}

/** An Ed25519 private key in PKCS#8 PEM, or a ConfigError naming `name`. */
function ed25519PrivateKey(name: string, pem: string | undefined): void {
  if (pem === undefined) return;
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    type = undefined;
  }
  if (type !== 'ed25519') throw new ConfigError(name, '***', 'an Ed25519 private key in PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)');
}

/** A sender such as `shop@example.com` or `Shop <shop@example.com>` (what nodemailer's `from` takes). */
const SENDER = /^(?:[^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

/**
 * Throws a {@link ConfigError} naming the first unusable variable: `JWT_PRIVATE_KEY`, `LICENSE_SIGNING_KEY`
 * (Ed25519 PKCS#8 PEM), `JWT_PREVIOUS_PUBLIC_KEYS` (one or more SPKI PEM blocks), `LICENSE_SECRET_KEY` (≥ 32
 * characters) and `MAIL_FROM` (an e-mail address, optionally with a name).
 */
function checkOrderingSecrets(v: SecretValues): void {
  ed25519PrivateKey('JWT_PRIVATE_KEY', v.jwtPrivateKeyPem);
  ed25519PrivateKey('LICENSE_SIGNING_KEY', v.licenseSigningKeyPem);
  if (v.jwtPreviousPublicKeysPem !== undefined) {
    const blocks = v.jwtPreviousPublicKeysPem.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? [];
    const parses = (pem: string) => {
      try {
        return createPublicKey(pem).asymmetricKeyType === 'ed25519';
      } catch {
        return false;
      }
    };
    if (blocks.length === 0 || !blocks.every(parses))
      throw new ConfigError('JWT_PREVIOUS_PUBLIC_KEYS', '***', 'Ed25519 public keys in SPKI PEM (-----BEGIN PUBLIC KEY-----), concatenated');
  }
  if (v.licenseSecretKey !== undefined && v.licenseSecretKey.length < 32)
    throw new ConfigError('LICENSE_SECRET_KEY', '***', 'a secret of at least 32 characters');
  if (!SENDER.test(v.mailFrom)) throw new ConfigError('MAIL_FROM', v.mailFrom, 'an e-mail address, optionally with a name: Shop <shop@example.com>');
}
