/**
 * Reads stay cheap as the table grows (docs/decisions.md §7): on a few hundred thousand punches, the page
 * and count statements of an event/modem read go through the (modem, id) index, never a sequential scan
 * of punches. The statements are the repository's own (pageQuery, countPunches's SQL via EXPLAIN).
 */
import { countPunches, pageQuery, readPunchPage, type PunchScope } from '../src/punches/punches.repository';
import { startTiming, type TimingTestContext } from './helpers';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime } from '@sports-timing/shared/src/test-time';

let ctx: TimingTestContext;
const MODEMS = 300;
const PER_MODEM = 1000;

beforeAll(async () => {
  ctx = await startTiming();
  // 300,000 punches in id order interleaved over 300 modems, as concurrent radio uploads produce them.
  await ctx.database.pool.query(`
    insert into punches (card, time, code, type, modem, reception_time_utc)
    select (1000000 + g % 5000)::text, 1580580000000 + g * 100, 31 + g % 60, 'Control', 'X-' || (g % ${MODEMS}), 1580576400000 + g * 100
    from generate_series(1, ${MODEMS * PER_MODEM}) g`);
  await ctx.database.pool.query('analyze punches');
}, testTime(60_000));
afterAll(async () => ctx.close());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

async function explain(text: string, values: unknown[]): Promise<PlanNode[]> {
  // SHOW_PLAN=1 prints the executed plans, for looking at costs while tuning.
  if (process.env.SHOW_PLAN)
    testNote((await ctx.database.pool.query(`explain (analyze, buffers) ${text}`, values)).rows.map((r) => r['QUERY PLAN']).join('\n'));
  const { rows } = await ctx.database.pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (format json) ${text}`, values);
  return nodes(rows[0]['QUERY PLAN'][0].Plan);
}

function expectIndexedOnly(plan: PlanNode[]): void {
  const onPunches = plan.filter((n) => n['Relation Name'] === 'punches');
  expect(onPunches.length).toBeGreaterThan(0);
  expect(onPunches.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  expect(plan.some((n) => n['Index Name'] === 'punches_modem_id')).toBe(true);
}

const scopes: [string, PunchScope][] = [
  [
    'an event of 8 modems from the start',
    { modems: ['X-1', 'X-2', 'X-3', 'X-4', 'X-5', 'X-6', 'X-7', 'X-8'], afterId: 0, timeFrom: 1580580000000, timeTo: 1580610000000 },
  ],
  ['one modem at the head (tail poll)', { modems: ['X-7'], afterId: 299_000, timeFrom: null, timeTo: null }],
  ['two modems in the middle', { modems: ['X-10', 'X-11'], afterId: 150_000, timeFrom: 1580590000000, timeTo: null }],
];

describe.each(scopes)('%s', (_name, scope) => {
  it('reads the page through the (modem, id) index (sparse) or the primary key (walk), never a sequential scan', async () => {
    for (const format of ['json', 'csv'] as const) {
      const sparse = pageQuery(scope, format, true, 'sparse');
      expectIndexedOnly(await explain(sparse.text, sparse.values));
      const walk = pageQuery(scope, format, true, 'walk');
      const plan = await explain(walk.text, walk.values);
      expect(plan.filter((n) => n['Relation Name'] === 'punches' && n['Node Type'] === 'Seq Scan')).toEqual([]);
      expect(plan.some((n) => n['Index Name'] === 'punches_pkey')).toBe(true);
    }
  });

  it('counts through the (modem, id) index', async () => {
    // countPunches runs exactly this statement shape; EXPLAIN it by intercepting the query text.
    const seen: { text: string; values: unknown[] }[] = [];
    const spy = { query: async (text: string, values: unknown[]) => (seen.push({ text, values }), { rows: [{ n: 0 }] }) };
    await countPunches(spy as never, scope);
    expectIndexedOnly(await explain(seen[0].text, seen[0].values));
  });
});

it('walks the (modem, id) index also in the generic plan of the prepared page statement', async () => {
  // The service runs pages as prepared statements; after a few executions PostgreSQL may switch to a
  // generic plan, planned without knowing afterId (see PUNCH_SESSION_SETTINGS).
  const scope: PunchScope = { modems: ['X-1', 'X-2', 'X-3', 'X-4'], afterId: 150_000, timeFrom: null, timeTo: null };
  const q = pageQuery(scope, 'json', true, 'sparse');
  const client = await ctx.database.pool.connect();
  try {
    await client.query('set plan_cache_mode = force_generic_plan');
    await client.query(`prepare generic_page(text[], int8) as ${q.text}`);
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `explain (format json) execute generic_page('{${scope.modems.join(',')}}', ${scope.afterId})`,
    );
    const plan = nodes(rows[0]['QUERY PLAN'][0].Plan);
    if (process.env.SHOW_PLAN) testNote(plan.map((n) => `${n['Node Type']} ${n['Relation Name'] ?? ''} ${n['Index Name'] ?? ''}`).join('\n'));
    const onPunches = plan.filter((n) => n['Relation Name'] === 'punches');
    // One index walk per modem branch (plus the exact count of the edge bucket, which may use any index).
    expect(onPunches.filter((n) => n['Node Type'] === 'Index Scan' && n['Index Name'] === 'punches_modem_id').length).toBeGreaterThanOrEqual(
      scope.modems.length,
    );
    expect(onPunches.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    // No sort of punches (the counters' small window aggregate may sort).
    expect(plan.filter((n) => n['Node Type'] === 'Sort' && nodes(n).some((d) => d['Relation Name'] === 'punches'))).toEqual([]);
  } finally {
    await client.query('deallocate generic_page; reset plan_cache_mode');
    client.release();
  }
});

it('never plans parallel workers for the generic plan of the id walk, even where they look cheap', async () => {
  // On a small test table parallel plans never look worth it; make them free, as a 50 M-punch table's row
  // estimates do, and the session setting (PUNCH_SESSION_SETTINGS) must still keep them out.
  const scope: PunchScope = { modems: ['X-1', 'X-2', 'X-3', 'X-4'], afterId: 150_000, timeFrom: null, timeTo: null };
  const q = pageQuery(scope, 'csv', false, 'walk');
  const client = await ctx.database.pool.connect();
  try {
    await client.query('set parallel_setup_cost = 0; set parallel_tuple_cost = 0; set min_parallel_index_scan_size = 0; set min_parallel_table_scan_size = 0');
    await client.query(`prepare walk_page(text[], int8) as ${q.text}`);
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (format json) execute walk_page('{${scope.modems.join(',')}}', 0)`);
    const plan = nodes(rows[0]['QUERY PLAN'][0].Plan);
    expect(plan.filter((n) => n['Node Type'].startsWith('Gather'))).toEqual([]);
  } finally {
    await client.query(
      'deallocate walk_page; reset parallel_setup_cost; reset parallel_tuple_cost; reset min_parallel_index_scan_size; reset min_parallel_table_scan_size',
    );
    client.release();
  }
});

it('serves a full page of a large event (its speed is the benchmark harness’s to measure)', async () => {
  const scope = scopes[0][1];
  const page = await readPunchPage(ctx.database.pool, scope, 'json');
  expect(page.count).toBe(1000);
});
