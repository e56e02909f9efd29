/**
 * Mail dispatch throughput: the ordering service's SMTP mailer (`smtpMailer`, services/ordering/src/mail/
 * mailer.ts) against a real SMTP server (`smtp-server` on loopback, accepting every message), pooled (its
 * production transport: `SMTP_POOL`, 5 connections reused) side by side with one connection per message
 * (`pool: false`, what the transport did before), in interleaved rounds of the same run. Messages are sent
 * 5 at a time, as the mail lane runs them (one per slot), each the size of an order confirmation.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { smtpMailer, SMTP_POOL } from '@sports-timing/ordering/src/mail/mailer';

/** Messages per second of each transport, one figure per round (interleaved: pooled, then one-per-message). */
export interface MailThroughput {
  messagesPerRound: number;
  concurrency: number;
  pooled: number[];
  perMessage: number[];
  /** Messages the server received in all (every sent message once). */
  received: number;
}

/** A confirmation-sized text body (about 3 KB, like the order confirmation of one item). */
const BODY = Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of the order confirmation: item, configuration, amount.`).join('\n');

async function sendAll(url: string, pool: boolean, messages: number, concurrency: number, round: number): Promise<number> {
  const mailer = smtpMailer(url, { pool, maxConnections: concurrency });
  let next = 0;
  const started = process.hrtime.bigint();
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < messages) {
          const i = next++;
          await mailer.send({
            from: 'shop@example.com',
            to: `customer${i}@example.com`,
            subject: `Order ${round}-${i}`,
            text: BODY,
            messageId: `<bench-${pool ? 'p' : 'c'}-${round}-${i}@bench>`,
          });
        }
      }),
    );
  } finally {
    mailer.close();
  }
  return messages / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** Measures both transports for `rounds` interleaved rounds of `messages` each. */
export async function measureMail(opts: { messages: number; rounds: number; log: (msg: string) => void }): Promise<MailThroughput> {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    maxClients: 1_000,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received++;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  const result: MailThroughput = { messagesPerRound: opts.messages, concurrency: SMTP_POOL.maxConnections, pooled: [], perMessage: [], received: 0 };
  try {
    for (let round = 0; round < opts.rounds; round++) {
      const pooled = await sendAll(url, true, opts.messages, SMTP_POOL.maxConnections, round);
      const perMessage = await sendAll(url, false, opts.messages, SMTP_POOL.maxConnections, round);
      result.pooled.push(pooled);
      result.perMessage.push(perMessage);
      opts.log(`mail round ${round + 1}: pooled ${pooled.toFixed(0)} msg/s, one connection per message ${perMessage.toFixed(0)} msg/s`);
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  result.received = received;
  return result;
}
