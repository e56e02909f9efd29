/**
 * Start-up reachability of the third parties an operator configured (README "Configuration", "Third parties at
 * start"; docs/decisions.md §3 "Third parties at start"): `SMTP_URL` (connect, greeting, EHLO and login, as
 * nodemailer's `verify()` does), the ERP tenants (`ERP_BASE_URL_WECLAPP`, `ERP_BASE_URL_WECLAPP_SANDBOX`) and the
 * payment provider (`PAYMENT_BASE_URL`) (one GET each: any HTTP answer counts, the server is there).
 *
 * Only variables set in the environment are probed: a default points at a local simulator that a lone service
 * does not need. A failure is one line `Configuration: VARIABLE (value, password masked): what failed`.
 * What a failure does depends on what it says about the value:
 * - a *wrong value* (the host name does not resolve, the relay refuses the login) stops the service
 *   in every environment: waiting does not mend it;
 * - a *network failure* (refused, reset, unreachable, no answer in time) is retried for {@link PROBE_WINDOW_MS}
 *   (the launcher starts the simulators beside the service); if it persists it stops the service in
 *   development and test, while in staging and production it is a warning and the service keeps serving — a
 *   third party briefly down must not take the shop down, and the outbox retries mail, paylinks and ERP
 *   hand-offs until it answers (docs/outbox.md).
 */
import nodemailer from 'nodemailer';
import { ConfigError, withoutPassword } from '@sports-timing/shared';
import type { OrderingConfig } from './config';
import { EnvelopeEncryption } from './crypto/aead';
import { passwordProblem } from './identity/passwords';

/** How long network failures are retried before they count, ms. */
const PROBE_WINDOW_MS = 5_000;

/** Deadline of one probe attempt, ms. */
const ATTEMPT_TIMEOUT_MS = 2_000;

/** Error codes of a network that may recover by itself; anything else means the value is wrong. */
const TRANSIENT = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
  'ESOCKET',
  'ECONNECTION',
  'TIMEOUT',
]);

/** One configured address and how to check it; `probe` rejects with the reason it is not usable. */
interface Target {
  variable: string;
  url: string;
  probe(): Promise<void>;
}

/** A probe's failure: the error whose message is the one line, and whether waiting could mend it. */
interface ProbeFailure {
  error: ConfigError;
  transient: boolean;
}

/** Outcome of {@link checkThirdParties}: failures that only warn (staging and production, network failures). */
export interface StartupCheckResult {
  warnings: string[];
}

/** The error's code and readable reason (fetch hides the socket error in `cause`; nodemailer adds `code`). */
function describe(err: unknown): { code: string | undefined; reason: string } {
  type Failure = { message?: string; code?: string; errors?: { message?: string }[] };
  const e = err as Failure & { cause?: Failure };
  const inner: Failure = e?.cause ?? e;
  const reason = inner?.message || inner?.errors?.map((x) => x.message).join('; ') || e?.message || String(err);
  return { code: inner?.code ?? e?.code, reason: reason.replace(/\s+/g, ' ').trim() };
}

/** GET `url` with a deadline; resolves on any HTTP answer. */
async function httpAnswers(url: string): Promise<void> {
  const res = await fetch(url, { method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS) }).catch((err: unknown) => {
    const name = (err as { name?: string }).name;
    if (name === 'TimeoutError' || name === 'AbortError') throw Object.assign(new Error(`no answer within ${ATTEMPT_TIMEOUT_MS} ms`), { code: 'TIMEOUT' });
    throw err;
  });
  await res.body?.cancel().catch(() => undefined);
}

/** Connect, greeting, EHLO (and login when the URL has credentials), then QUIT. */
async function smtpAnswers(url: string): Promise<void> {
  // The URL is read as the mailer reads it (mail/mailer.ts), only with short timeouts.
  const transport = nodemailer.createTransport({
    url,
    connectionTimeout: ATTEMPT_TIMEOUT_MS,
    greetingTimeout: ATTEMPT_TIMEOUT_MS,
    socketTimeout: ATTEMPT_TIMEOUT_MS,
  } as never);
  try {
    await transport.verify();
  } finally {
    transport.close();
  }
}

/** The configured third-party addresses set in `env` (README "Configuration", "ordering: third parties"). */
function targets(config: OrderingConfig, env: Record<string, string | undefined>): Target[] {
  const set = (name: string) => (env[name]?.trim() ?? '') !== '';
  const out: Target[] = [];
  if (config.smtpUrl && set('SMTP_URL')) out.push({ variable: 'SMTP_URL', url: config.smtpUrl, probe: () => smtpAnswers(config.smtpUrl!) });
  for (const [variable, url] of [
    ['ERP_BASE_URL_WECLAPP', config.erpBaseUrlWeclapp],
    ['ERP_BASE_URL_WECLAPP_SANDBOX', config.erpBaseUrlWeclappSandbox],
    ['PAYMENT_BASE_URL', config.paymentBaseUrl],
  ] as const)
    if (set(variable)) out.push({ variable, url, probe: () => httpAnswers(url) });
  return out;
}

/** Probes one target, retrying network failures until `deadline` (epoch ms); undefined when it answers. */
async function probeUntil(target: Target, deadline: number): Promise<ProbeFailure | undefined> {
  for (;;) {
    const failure = await target.probe().then(
      () => undefined,
      (err: unknown) => describe(err),
    );
    if (!failure) return undefined;
    const transient = failure.code !== undefined && TRANSIENT.has(failure.code);
    if (!transient || Date.now() + 250 >= deadline) {
      const what = transient ? `cannot reach it: ${failure.reason}` : `unusable: ${failure.reason}`;
      return { error: new ConfigError(target.variable, withoutPassword(target.url), '', what), transient };
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Probes every configured third party in parallel (at most {@link PROBE_WINDOW_MS} plus one attempt). Throws a
 * {@link ConfigError} whose message is the first fatal failure's line when it must stop the service (module comment); returns
 * the lines that only warn.
 */
export async function checkThirdParties(
  config: OrderingConfig,
  env: Record<string, string | undefined> = process.env,
  windowMs: number = PROBE_WINDOW_MS,
): Promise<StartupCheckResult> {
  const deadline = Date.now() + windowMs;
  const failures = (await Promise.all(targets(config, env).map((t) => probeUntil(t, deadline)))).filter((f): f is ProbeFailure => f !== undefined);
  const deployed = config.environment === 'production' || config.environment === 'staging';
  const fatal = failures.find((f) => !f.transient || !deployed);
  if (fatal) throw fatal.error;
  return { warnings: failures.map((f) => `${f.error.message}; serving anyway, the outbox retries until it answers`) };
}

/**
 * The settings whose rule belongs to a domain, checked before anything starts (README "Configuration"): the
 * `ENCRYPTION_KEYS` key ring (crypto/aead.ts; its error names the variable, never a key) and
 * `BOOTSTRAP_ADMIN_PASSWORD`, which the user `admin` gets on a fresh database, against the password policy of
 * every user (identity/passwords.ts). Throws a {@link ConfigError} naming the variable.
 */
export function checkDomainSettings(config: Pick<OrderingConfig, 'encryptionKeys' | 'bootstrapAdminPassword'>): void {
  if (config.encryptionKeys !== undefined) EnvelopeEncryption.fromSpec(config.encryptionKeys);
  const weak = config.bootstrapAdminPassword === undefined ? null : passwordProblem(config.bootstrapAdminPassword, 'admin');
  if (weak) throw new ConfigError('BOOTSTRAP_ADMIN_PASSWORD', '***', `a password that follows the password policy (it ${weak})`);
}
