/**
 * What the harness reads from and does to the benchmark databases around a measurement: waiting for them to
 * fall quiet, the CPU their backends used, the popular scenarios' gap-free check and clean-up, and the shop
 * schema reset before the ordering service starts.
 */
import { connect } from './dataset';
import { WRITER_CARD } from './live-load';
import type { LoadResult } from './load-spec';
import { cpuSeconds } from './servers';

/** Longest wait for the databases to fall quiet before a measurement (ms). */
const SETTLE_MAX_MS = 60_000;

/**
 * Waits until no other session runs a statement on the benchmark databases (at most {@link SETTLE_MAX_MS}):
 * a server keeps executing the statements of a load that autocannon has already ended (a PostgREST or raw
 * exact count of a million punches runs for seconds), which would otherwise slow down whichever server is
 * measured next. Returns the time waited (ms).
 */
export async function settle(urls: string[]): Promise<number> {
  const started = Date.now();
  const deadline = started + SETTLE_MAX_MS;
  for (const url of urls) {
    const client = await connect(url);
    try {
      for (;;) {
        const { rows } = await client.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where datname = current_database() and state = 'active' and pid <> pg_backend_pid() and backend_type = 'client backend'
             and query not ilike 'listen %'`,
        );
        if (rows[0].n === 0 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await client.end();
    }
  }
  return Date.now() - started;
}

/**
 * CPU seconds (user + system, from `/proc`) used so far by each backend of the benchmark databases (the
 * databases of `urls`), by pid, the probe's own backend left out. Backends of the same PostgreSQL serving
 * other databases (other work on the machine) are not counted.
 */
export async function backendCpu(client: Awaited<ReturnType<typeof connect>>, urls: string[]): Promise<Map<number, number>> {
  const names = urls.map((u) => decodeURIComponent(new URL(u).pathname.slice(1)));
  // The popular scenarios' writer is the same for every server: left out.
  const { rows } = await client.query<{ pid: number }>(
    "select pid from pg_stat_activity where datname = any($1::text[]) and pid <> pg_backend_pid() and application_name <> 'bench-writer'",
    [names],
  );
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const s = cpuSeconds(pid);
    if (s !== null) out.set(pid, s);
  }
  return out;
}

/** CPU seconds the backends used between two {@link backendCpu} samples (a backend new since `before` counts from 0). */
export function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, s] of after) sum += s - (before.get(pid) ?? 0);
  return sum;
}

/**
 * Drops the ordering service's schema of the benchmark database (the service migrates a new one at its
 * start): the payment simulator starts from its seed ids on every run, so orders of an earlier run would
 * already hold the paylink ids it hands out, and every run starts from the same empty order tables.
 */
/** The ordering outbox after a shop run: jobs left when the load ended, how long until none was (s), and any left at the limit. */
export interface OutboxDrain {
  backlogAtEnd: number;
  drainSeconds: number;
  left: number;
}

/**
 * Waits until the ordering outbox of `url` holds no job that is neither done nor dead (every order's e-mails
 * and paylink job finished), at most `maxMs`; polls every 50 ms.
 */
export async function drainOutbox(url: string, maxMs = 120_000): Promise<OutboxDrain> {
  const client = await connect(url);
  const started = Date.now();
  try {
    const pending = async () =>
      (await client.query<{ n: number }>('select count(*)::int as n from ordering.outbox_messages where sent_at is null and dead_at is null')).rows[0].n;
    const backlogAtEnd = await pending();
    let left = backlogAtEnd;
    while (left > 0 && Date.now() - started < maxMs) {
      await new Promise((r) => setTimeout(r, 50));
      left = await pending();
    }
    return { backlogAtEnd, drainSeconds: backlogAtEnd === 0 ? 0 : (Date.now() - started) / 1000, left };
  } finally {
    await client.end();
  }
}

export async function resetShopSchema(url: string): Promise<void> {
  const client = await connect(url);
  try {
    await client.query('drop schema if exists ordering cascade');
  } finally {
    await client.end();
  }
}

/** Id of a user of the dataset (the popular scenarios' writer uploads as an admin in its name). */
export async function firstUserId(url: string): Promise<number> {
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ id: number }>('select min(id)::int as id from timing.users');
    return rows[0].id ?? 1;
  } finally {
    await client.end();
  }
}

/**
 * The popular scenarios' gap-free check: every live client's punches (count and id sum of what it received
 * after the id it started from, in ascending order) must be exactly the big event's punches in that id range
 * as stored once the run ended. Returns the clients checked and those whose punches differ or came out of order.
 */
export async function checkFollowed(
  url: string,
  modems: string[],
  load: LoadResult,
): Promise<{ clients: number; violations: number; received: number; firstViolation?: string }> {
  const followed = load.followed ?? [];
  if (followed.length === 0) return { clients: 0, violations: 0, received: 0 };
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ n: string; s: string }>(
      `select count(p.id)::text as n, coalesce(sum(p.id), 0)::text as s
         from unnest($1::int8[], $2::int8[]) with ordinality c(lo, hi, i)
         left join timing.punches p on p.id > c.lo and p.id <= c.hi and p.modem = any($3::text[])
        group by c.i order by c.i`,
      [followed.map((f) => f.start), followed.map((f) => f.last), modems],
    );
    let violations = 0;
    let firstViolation: string | undefined;
    followed.forEach((f, i) => {
      if (f.outOfOrder > 0 || Number(rows[i].n) !== f.count || Number(rows[i].s) !== f.sum) {
        violations++;
        firstViolation ??= `client ${i} of ${followed.length}: ids (${f.start}, ${f.last}], received ${f.count} (sum ${f.sum}, ${f.outOfOrder} out of order), stored ${rows[i].n} (sum ${rows[i].s})`;
      }
    });
    return { clients: followed.length, violations, received: followed.reduce((a, f) => a + f.count, 0), firstViolation };
  } finally {
    await client.end();
  }
}

/** Deletes the punches the popular scenarios' writer stored (its card) and folds the counters. */
export async function removeWritten(url: string): Promise<void> {
  const client = await connect(url);
  try {
    // The counter triggers name their tables unqualified.
    await client.query('set search_path = timing, public');
    await client.query(`delete from punches where card = '${WRITER_CARD}'`);
    await client.query('select compact_punch_counts()');
  } finally {
    await client.end();
  }
}
