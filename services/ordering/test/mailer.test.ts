/**
 * The development mailer: every message becomes an `.eml` file in its folder, which is created on the first
 * message and again when it has been removed since. The SMTP mailer against a real SMTP server (`smtp-server`)
 * that refuses, defers or drops the connection at chosen points: what may be retried and what must not.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net, { type AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { fileMailer, MailNotRetriedError, smtpMailer } from '../src/mail/mailer';

const message = (n: number) => ({
  from: 'Shop <shop@example.com>',
  to: 'buyer@example.com',
  subject: `Order ${n}`,
  text: `Hello ${n}`,
  messageId: `<m${n}@test>`,
  language: 'en',
});

test('writes one .eml per message, also after its folder was removed', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'mailer-test-'));
  const dir = path.join(root, 'mail');
  const mailer = fileMailer(dir);
  try {
    await mailer.send(message(1));
    await mailer.send(message(2));
    expect(readdirSync(dir).filter((f) => f.endsWith('.eml'))).toHaveLength(2);
    rmSync(dir, { recursive: true });
    await mailer.send(message(3));
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/-m3test\.eml$/);
    const eml = readFileSync(path.join(dir, files[0]), 'utf8');
    expect(eml).toContain('Subject: Order 3');
    expect(eml).toContain('Message-ID: <m3@test>');
  } finally {
    mailer.close();
    rmSync(root, { recursive: true, force: true });
  }
});

/** A relay behaving as `behaviour` says; `drop()` destroys its open connections (a network failure). */
async function relay(behaviour: (drop: () => void) => Partial<SMTPServerOptions>) {
  const sockets = new Set<net.Socket>();
  const drop = () => sockets.forEach((s) => s.destroy());
  const server = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false, ...behaviour(drop) });
  server.server.on('connection', (s: net.Socket) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.server.address() as AddressInfo).port;
  return { url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** What `send` throws: 'refused', 'outcome-unknown' (both not retried), 'retry' (a plain error), or 'sent'. */
async function outcome(url: string): Promise<string> {
  const mailer = smtpMailer(url);
  try {
    await mailer.send(message(1));
    return 'sent';
  } catch (err) {
    return err instanceof MailNotRetriedError ? err.reason : 'retry';
  } finally {
    mailer.close();
  }
}

test.each([
  [
    '550 at RCPT: refused, not retried',
    'refused',
    (): Partial<SMTPServerOptions> => ({ onRcptTo: (_a, _s, cb) => cb(Object.assign(new Error('5.1.1 mailbox unavailable'), { responseCode: 550 })) }),
  ],
  [
    '554 after DATA: refused, not retried',
    'refused',
    (): Partial<SMTPServerOptions> => ({
      onData: (st, _s, cb) =>
        st.on('data', () => undefined).on('end', () => cb(Object.assign(new Error('5.7.1 rejected by content filter'), { responseCode: 554 }))),
    }),
  ],
  [
    '451 at RCPT (greylisting): retried',
    'retry',
    (): Partial<SMTPServerOptions> => ({ onRcptTo: (_a, _s, cb) => cb(Object.assign(new Error('4.7.1 greylisted'), { responseCode: 451 })) }),
  ],
  ['connection lost at RCPT: retried (nothing was sent)', 'retry', (drop: () => void): Partial<SMTPServerOptions> => ({ onRcptTo: () => drop() })],
  [
    'connection lost after the end of DATA: outcome unknown, not retried',
    'outcome-unknown',
    (drop: () => void): Partial<SMTPServerOptions> => ({ onData: (st) => st.on('data', () => undefined).on('end', () => drop()) }),
  ],
  ['a plain relay: sent', 'sent', (): Partial<SMTPServerOptions> => ({ onData: (st, _s, cb) => st.on('data', () => undefined).on('end', () => cb()) })],
] as const)('SMTP mailer: %s', async (_name, expected, behaviour) => {
  const r = await relay(behaviour);
  try {
    expect(await outcome(r.url)).toBe(expected);
  } finally {
    await r.close();
  }
});

test('SMTP mailer: its timeouts are transport options (a relay that never greets is given up after greetingTimeout)', async () => {
  // A TCP peer that accepts and never says 220. Options given where nodemailer does not read them (message
  // defaults) would leave its own 30 s greeting timeout in force.
  const silent = net.createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const mailer = smtpMailer(`smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`, { greetingTimeout: 300 });
  try {
    // Given up by the 300 ms greeting timeout: without it, nodemailer's own 30 s would outlast the test's deadline.
    await expect(mailer.send(message(1))).rejects.toMatchObject({ code: 'ETIMEDOUT' });
  } finally {
    mailer.close();
    silent.close();
  }
});
