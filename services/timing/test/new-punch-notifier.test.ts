/**
 * The NOTIFY after uploads (punches/new-punch-notifier.ts, docs/architecture.md "Wake-up"), on a real
 * PostgreSQL with a real LISTEN session: a lone upload is announced at once, a run of uploads by at most one
 * NOTIFY per interval, and the highest id always arrives last.
 */
import pg from 'pg';
import { testTime } from '@sports-timing/shared/src/test-time';
import { NewPunchNotifier, NOTIFY_INTERVAL_MS } from '../src/punches/new-punch-notifier';
import { PUNCH_CHANNEL } from '../src/punches/punch-upload.repository';
import { startTiming, type TimingTestContext } from './helpers';

jest.setTimeout(testTime(60_000));

let ctx: TimingTestContext;
let listener: pg.Client;
const received: number[] = [];

beforeAll(async () => {
  ctx = await startTiming({ withAdmin: false });
  listener = new pg.Client({ connectionString: ctx.testDb.url });
  await listener.connect();
  listener.on('notification', (n) => {
    if (n.channel === PUNCH_CHANNEL) received.push(Number(n.payload));
  });
  await listener.query(`listen ${PUNCH_CHANNEL}`);
});
afterAll(async () => {
  await listener.end();
  await ctx.close();
});

/** A notifier on the context's real pool that records when each of its NOTIFY statements started (performance.now ms). */
function recordingNotifier(): { notifier: NewPunchNotifier; starts: number[]; errors: unknown[] } {
  const starts: number[] = [];
  const errors: unknown[] = [];
  const pool = ctx.database.pool;
  const recording = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
      return (...args: Parameters<pg.Pool['query']>) => {
        starts.push(performance.now());
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  return { notifier: new NewPunchNotifier(recording, (err) => errors.push(err)), starts, errors };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

test('a lone upload is announced by one NOTIFY carrying its id', async () => {
  received.length = 0;
  const { notifier, starts, errors } = recordingNotifier();
  notifier.notify(41);
  await until(() => received.includes(41));
  expect(errors).toEqual([]);
  expect(starts).toHaveLength(1);
  expect(received).toEqual([41]);
});

test('uploads in quick succession: NOTIFYs start at least the interval apart, and the last carries the highest id', async () => {
  received.length = 0;
  const { notifier, starts, errors } = recordingNotifier();
  // 300 uploads, one every millisecond or so (a mass start of a few hundred modems).
  for (let id = 1_000; id < 1_300; id++) {
    notifier.notify(id);
    await new Promise((r) => setImmediate(r));
    if (id % 10 === 0) await new Promise((r) => setTimeout(r, 1));
  }
  await until(() => received.includes(1_299));
  expect(errors).toEqual([]);
  // A NOTIFY per upload would be hundreds; per interval it is at most one per 10 ms of the run.
  const elapsed = starts[starts.length - 1] - starts[0];
  expect(starts.length).toBeLessThanOrEqual(Math.floor(elapsed / (NOTIFY_INTERVAL_MS - 2)) + 1);
  // Node's timers run on the loop's cached millisecond clock: a pause may end up to a millisecond or two early.
  for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(NOTIFY_INTERVAL_MS - 2);
  expect(received[received.length - 1]).toBe(1_299);
  expect([...received].sort((a, b) => a - b)).toEqual(received);
  expect(received[0]).toBe(1_000);
});
