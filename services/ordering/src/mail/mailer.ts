/**
 * Outgoing e-mail behind one small interface (docs/decisions.md §1): SMTP through nodemailer when `SMTP_URL` is set,
 * otherwise `.eml` files under `<dataDir>/mail` (development). Only the outbox dispatcher sends.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';

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

/** SMTP mailer (`smtp://user:pass@host:port` or `smtps://…`), with short timeouts so the outbox retries. */
export function smtpMailer(url: string): Mailer {
  const transport = nodemailer.createTransport(url, { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000 } as never);
  return {
    async send(m) {
      await transport.sendMail(toNodemailer(m));
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

/** Development mailer: each message becomes `<dir>/<time>-<message-id>.eml`. */
export function fileMailer(dir: string): Mailer {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  // Created once, not per message (a mkdir per message was a visible part of an order's CPU); created again
  // when it has gone away since.
  let dirReady: Promise<unknown> | undefined;
  const ensureDir = () => (dirReady ??= mkdir(dir, { recursive: true }).catch((err: unknown) => ((dirReady = undefined), Promise.reject(err instanceof Error ? err : new Error(String(err))))));
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
