/**
 * The mail dispatch measurement (src/mail.ts) against its real SMTP server: both transports send every
 * message exactly once and report a rate for each round.
 */
import { measureMail } from '../src/mail';
import { testTime } from '@sports-timing/shared/src/test-time';

test(
  'pooled and one-connection-per-message rounds each deliver every message once',
  async () => {
    const logs: string[] = [];
    const r = await measureMail({ messages: 30, rounds: 2, log: (m) => logs.push(m) });
    expect(r.received).toBe(30 * 2 * 2);
    expect(r.pooled).toHaveLength(2);
    expect(r.perMessage).toHaveLength(2);
    for (const rate of [...r.pooled, ...r.perMessage]) expect(rate).toBeGreaterThan(0);
    expect(r.concurrency).toBe(5);
    expect(logs).toHaveLength(2);
  },
  testTime(60_000),
);
