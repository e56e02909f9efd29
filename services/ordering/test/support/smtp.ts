/**
 * A real SMTP peer for tests (`smtp-server`): collects every message received, and can be stopped and
 * started again on the same port to simulate an outage.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { testTime } from '@sports-timing/shared/src/test-time';

/** A received message: the raw RFC 5322 text and its parsed form. */
export interface ReceivedMail {
  raw: string;
  parsed: ParsedMail;
  envelopeTo: string[];
}

/** A running test SMTP server. */
export interface TestSmtp {
  url: string;
  port: number;
  received: ReceivedMail[];
  /** Refuse connections (server down). */
  stop(): Promise<void>;
  /** Accept connections again on the same port. */
  start(): Promise<void>;
  /** Resolves once at least `n` messages have arrived (or rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
}

/** Starts a test SMTP server on a free loopback port. */
export async function startTestSmtp(): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  let port = 0;
  let server: SMTPServer;
  const make = () =>
    new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw).then(
            (parsed) => {
              received.push({ raw, parsed, envelopeTo: session.envelope.rcptTo.map((r) => r.address) });
              callback();
            },
            (err: Error) => callback(err),
          );
        });
      },
    });
  const listen = () =>
    new Promise<void>((resolve) => {
      server = make();
      server.listen(port, '127.0.0.1', () => {
        port = (server.server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return {
    get url() {
      return `smtp://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
    start: listen,
    async waitFor(n, timeoutMs = 10_000) {
      const until = Date.now() + testTime(timeoutMs);
      while (received.length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} messages, got ${received.length}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return received;
    },
  };
}
