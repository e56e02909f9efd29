import pg from 'pg';
import { pageQuery } from '../services/timing/src/punches/punches.repository';
(async () => {
  const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/bench', options: '-c search_path=timing,public' });
  await c.connect();
  const { rows } = await c.query("select array_agg(modem order by modem) m from event_modems where event_id=1");
  const modems = rows[0].m;
  for (const [label, afterId, withTotal] of [['mid', 4461054, true], ['tail', 4999995, true], ['mid-nt', 4461054, false]] as const) {
    const q = pageQuery({ modems, afterId, timeFrom: null, timeTo: null }, 'json', withTotal);
    for (let i = 0; i < 8; i++) {
      const t = process.hrtime.bigint();
      const r = await c.query({ name: q.name, text: q.text, values: q.values });
      console.log(label, i, Number(process.hrtime.bigint() - t) / 1e6, 'ms', r.rows[0].count, r.rows[0].total);
    }
  }
  await c.query("set plan_cache_mode = force_custom_plan");
  await c.end();
})();
