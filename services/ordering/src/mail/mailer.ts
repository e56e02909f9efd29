/**
 * Outgoing e-mail behind one small interface (docs/decisions.md §1): SMTP through nodemailer when `SMTP_URL` is set,
 * otherwise `.eml` files under `<dataDir>/mail` (development). Only the outbox dispatcher sends.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { ProviderError } from '@sports-timing/shared';

/** What is stored in the outbox for one e-mail. */
export interface MailPayload {
  to: string;
  subject: string;
  /** Plain-text body. */
  text: string;
  /** HTML body (optional). */
  html?: string;
  /** Language of the message (`Content-Language`). */
  language?: string;
}

/** A message ready to send: payload plus sender and stable Message-ID. */
interface MailMessage extends MailPayload {
  from: string;
  messageId: string;
}

/** Sends one message; throws when the server refuses or is unreachable. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  /** Whether the mail server answers (for status reports). */
  isUp(): Promise<boolean>;
  close(): void;
}

function toNodemailer(m: MailMessage) {
  return {
    from: m.from,
    to: m.to,
    subject: m.subject,
    text: m.text,
    html: m.html,
    messageId: m.messageId,
    headers: m.language ? { 'Content-Language': m.language } : undefined,
  };
}

/**
 * Transport options of the SMTP mailer (nodemailer reads them from `createTransport`'s first argument):
 * a pool of connections reused across messages, and the client timeouts of RFC 5321 §4.5.3.2 — 5 minutes
 * for the greeting, 10 minutes of silence (covering the longest, the end of DATA). A relay that is slow
 * for one recipient holds one pooled connection, never the others. Connecting gets 30 s: nothing is sent
 * before, so giving up early is safe. Figures and reasons: docs/outbox.md, "Mail".
 */
export const SMTP_POOL = {
  pool: true,
  maxConnections: 5,
  maxMessages: 100,
  connectionTimeout: 30_000,
  greetingTimeout: 5 * 60_000,
  socketTimeout: 10 * 60_000,
} as const;

/**
 * Mail that must not be retried by itself: the relay refused it for good (`refused`, a 5xx answer in
 * `providerMessage`), or the connection failed after the whole message was sent (`outcome-unknown`: the relay may
 * have accepted it; retrying blindly could deliver it twice, so an operator decides, docs/outbox.md). The kit's
 * error base (`@sports-timing/shared` `ProviderError`) with `retryable: false`; `status` is the SMTP reply code.
 * @internal
 */
export class MailNotRetriedError extends ProviderError<'refused' | 'outcome-unknown'> {
  constructor(
    readonly reason: 'refused' | 'outcome-unknown',
    message: string,
    /** The relay's answer (e.g. `550 5.1.1 mailbox unavailable`), when there was one. */
    response?: string,
    /** The relay's SMTP reply code, when there was one. */
    replyCode?: number,
  ) {
    super({ provider: 'Mail relay', operation: 'send', status: replyCode ?? null, code: reason, providerMessage: response, retryable: false, message });
    this.name = 'MailNotRetriedError';
  }
}

/** What nodemailer puts on its errors (nodemailer's `errors` module; `permanent` is set for 5xx except 503). */
interface SmtpError extends Error {
  code?: string;
  response?: string;
  responseCode?: number;
  permanent?: boolean;
}

/**
 * SMTP mailer (`smtp://user:pass@host:port` or `smtps://…`) on a connection pool (`SMTP_POOL`, `overrides`
 * for tests and the benchmark). `send` throws {@link MailNotRetriedError} for a 5xx answer and for a
 * connection lost after the message was handed over, and a plain error for what a retry may fix (4xx,
 * connection refused or lost before the message went out).
 * @internal
 */
export function smtpMailer(
  url: string,
  overrides: Partial<{ pool: boolean; maxConnections: number; connectionTimeout: number; greetingTimeout: number; socketTimeout: number }> = {},
): Mailer {
  const transport = nodemailer.createTransport({ url, ...SMTP_POOL, ...overrides } as never);
  // The stream the transport sends is read only once the relay has said 354 to DATA, and it ends when the
  // transport has written all of it, right before the final dot. A 'stream' plugin (it runs for every
  // message before the transport takes it) watches that end for the message's own callback.
  transport.use('stream', (mail, done) => {
    const onHandedOver = (mail.data as { onHandedOver?: () => void }).onHandedOver;
    const message = mail.message as unknown as { createReadStream: (...a: unknown[]) => NodeJS.ReadableStream };
    if (onHandedOver) {
      const create = message.createReadStream.bind(message);
      message.createReadStream = (...a: unknown[]) => create(...a).once('end', onHandedOver);
    }
    done();
  });
  return {
    async send(m) {
      let handedOver = false;
      try {
        await transport.sendMail({ ...toNodemailer(m), onHandedOver: () => (handedOver = true) } as never);
      } catch (e) {
        const err = e as SmtpError;
        if (err.responseCode && err.permanent)
          throw new MailNotRetriedError('refused', `relay refused the message: ${err.response ?? err.message}`, err.response, err.responseCode);
        if (!err.responseCode && handedOver) {
          throw new MailNotRetriedError(
            'outcome-unknown',
            `connection lost after the message was sent; the relay may have accepted it (${err.code ?? err.message})`,
          );
        }
        throw err;
      }
    },
    async isUp() {
      try {
        await transport.verify();
        return true;
      } catch {
        return false;
      }
    },
    close: () => transport.close(),
  };
}

/** Development mailer: each message becomes `<dir>/<time>-<message-id>.eml`. @internal */
export function fileMailer(dir: string): Mailer {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  // Created once, not per message (a mkdir per message was a visible part of an order's CPU); created again
  // when it has gone away since.
  let dirReady: Promise<unknown> | undefined;
  const ensureDir = () =>
    (dirReady ??= mkdir(dir, { recursive: true }).catch(
      (err: unknown) => ((dirReady = undefined), Promise.reject(err instanceof Error ? err : new Error(String(err)))),
    ));
  return {
    async send(m) {
      const info = (await transport.sendMail(toNodemailer(m))) as unknown as { message: Buffer };
      const safeId = m.messageId.replace(/[^\w.-]/g, '');
      const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${safeId}.eml`);
      await ensureDir();
      try {
        await writeFile(file, info.message);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        dirReady = undefined;
        await ensureDir();
        await writeFile(file, info.message);
      }
    },
    isUp: () => Promise.resolve(true),
    close: () => transport.close(),
  };
}

/** The configured mailer: SMTP when a URL is given, else the `.eml` drop in `<dataDir>/mail`. */
export function createMailer(opts: { smtpUrl?: string; dataDir: string }): Mailer {
  return opts.smtpUrl ? smtpMailer(opts.smtpUrl) : fileMailer(path.join(opts.dataDir, 'mail'));
}
