/**
 * SCALING.md from the figures of one `pnpm topology` run: each scenario's outcome and figures, then the
 * capacity model (written text; the figures it leans on are this run's).
 */
import type { MaintenanceResult, OrderDeliveryResult, SharedRateLimitResult } from './order-scenarios';
import type { CachedPollsResult } from './cache-scenarios';
import type { LiveResumeResult, PunchDeliveryResult, ReplicaLagResult } from './punch-scenarios';
import type { RollingRestartResult } from './rolling-restart';
import type { RollingUpgradeResult } from './rolling-upgrade';
import type { ThroughputResult } from './throughput';

/** Everything one run measured. */
export interface Figures {
  punches: PunchDeliveryResult;
  punchesKill: PunchDeliveryResult;
  live: LiveResumeResult;
  orders: OrderDeliveryResult;
  maintenance: MaintenanceResult;
  rateLimit: SharedRateLimitResult;
  replica: ReplicaLagResult;
  rolling: RollingRestartResult;
  upgrade: RollingUpgradeResult;
  throughput: ThroughputResult[];
  /** Pollers through the nginx cache; absent when nginx is not installed. */
  cache?: CachedPollsResult;
}

const n0 = (x: number) => Math.round(x).toLocaleString('en-US');
const n1 = (x: number) => x.toFixed(1);
const ok = (v: string[]) => (v.length ? `**FAILED**: ${v.slice(0, 5).join('; ')}` : 'held');
const spread = (r: Record<string, number>) =>
  Object.entries(r)
    .sort()
    .map(([k, v]) => `${k} ${n0(v)}`)
    .join(', ');

function punchRows(r: PunchDeliveryResult): string {
  return [
    `| uploads (batches of 1–20) / punches | ${n0(r.uploads)} / ${n0(r.punches)} in ${n1(r.durationMs / 1000)} s (${n0(r.uploadsPerSecond)} uploads/s) |`,
    `| polls | ${n0(r.polls)} (${n0(r.pollsPerSecond)} polls/s), served by ${spread(r.pollSpread.byInstance)} |`,
    `| consecutive polls of one poller on another instance | ${n0(r.pollSpread.switchShare * 100)} % |`,
    `| upload / poll attempts retried by the client (5xx, network) | ${n0(r.uploadRetries)} / ${n0(r.pollRetries)} |`,
    `| missed / repeated per poller | ${r.missed.join(' ')} / ${r.repeated.join(' ')} |`,
    `| stored in PostgreSQL (distinct) | ${n0(r.stored)} (${n0(r.storedDistinct)}) |`,
    `| last poller caught up after the last upload | ${n0(r.catchUpMs)} ms |`,
    ...(r.events.length ? [`| events | ${r.events.join('; ')} |`] : []),
    `| guarantee | ${ok(r.violations)} |`,
  ].join('\n');
}

const waitsText = (w: Record<string, number>) =>
  Object.entries(w)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([k, v]) => `${k} ${n0(v * 100)} %`)
    .join(', ');

function cpuText(c: ThroughputResult['uploadCpu'], seconds: number): string {
  const total = c.services + c.postgres + c.haproxy + c.loadGenerator;
  const pct = (x: number) => `${n0((x / total) * 100)} %`;
  return `services ${pct(c.services)}, PostgreSQL ${pct(c.postgres)}, HAProxy ${pct(c.haproxy)}, load generator ${pct(c.loadGenerator)} (${n1(total / seconds)} of the cores busy)`;
}

/** Where the throughput went, in words, from the figures (gain from 1 to the most instances, what PostgreSQL waited on). */
function throughputVerdict(tp: ThroughputResult[], cpus: number): string {
  const first = tp[0];
  const last = tp[tp.length - 1];
  const gain = (a: number, b: number) => (b / a >= 1.15 ? `rose ${n1(b / a)}×` : b / a <= 0.87 ? `fell to ${n0((b / a) * 100)} %` : 'stayed level');
  const top = (w: Record<string, number>) => Object.entries(w).sort((a, b) => b[1] - a[1])[0]?.[0] ?? '?';
  return `From ${first.instances} to ${last.instances} timing instances, uploads/s ${gain(first.uploadsPerSecond, last.uploadsPerSecond)} and polls/s ${gain(first.pollsPerSecond, last.pollsPerSecond)}.
Where the bottleneck is: while uploading, PostgreSQL's busy backends mostly waited on \`${top(first.uploadWaits)}\` — every upload is one
durable commit, and commits queue for the same WAL flush on the same disk however many instances send them; more
instances only add concurrent commits to that queue. While polling, PostgreSQL was on the CPU (\`${top(first.pollWaits)}\`): a page is
rendered by PostgreSQL and converted by the service, so polls are CPU in both. On ${cpus} cores that all processes share
(instances, PostgreSQL, HAProxy and the load generator), a second or third instance adds processes competing for the
same cores, not capacity: instances buy availability here (a, b, c, f), not speed. Capacity grows with cores and disks —
instances on further machines for the service CPU, a faster WAL device for uploads, replicas for reads.`;
}

/** Section (i): pollers through nginx (infra/nginx/timing-cache.conf) in front of the balancer. */
function cacheText(c: CachedPollsResult | undefined): string {
  if (!c) return 'Not measured in this run: nginx is not installed (`apt-get install nginx-light`).';
  return `${c.pollers} anonymous pollers followed one public event with \`afterId\` through nginx (infra/nginx/timing-cache.conf:
\`proxy_cache_lock\`, background revalidation with \`If-None-Match\`, the service's \`max-age=1\`) in front of the balancer,
while ${c.uploaders} uploaders uploaded through the balancer (${n1(c.durationMs / 1000)} s): ${n0(c.polls)} polls, of which
${n0(c.serviceReads)} reached a timing instance (${n1((c.serviceReads / Math.max(1, c.polls)) * 100)} %). ${n0(c.punches)} punches; missed per
poller ${c.missed.join(' ')}, repeated ${c.repeated.join(' ')}. Guarantee: ${ok(c.violations)}.`;
}

/** The SCALING.md text. */
export function renderScaling(f: Figures, meta: { date: string; cpus: number; cpuModel: string; node: string; quick: boolean; loadAverage: number }): string {
  const tp = f.throughput;
  return `# Scaling: the production topology on one machine

Generated by \`pnpm topology\` (scripts/topology.ts over test/topology/) on ${meta.date}: ${meta.cpus} cores (${meta.cpuModel}), Node ${meta.node}, load average ${n1(meta.loadAverage)} at the start (the machine is shared: other work shows in every figure)${meta.quick ? ', **quick run** (shortened phases)' : ''}.
Re-run it to refresh every figure; \`test/topology/topology.test.ts\` runs a reduced version in the normal test run.

The topology: HAProxy 2.6 (roundrobin, \`option httpchk GET /readyz\` every 250 ms with a 2 s check timeout, down
after 3 failed checks, up after 2, \`retry-on conn-failure empty-response\` with \`option redispatch\`) in front of **3 timing and 2 ordering
instances** of the compiled services (\`pnpm build\`, \`node --conditions=dist services/<svc>/dist/server.js\`), a private
PostgreSQL 15 primary (\`wal_level=replica\`, durability on) with a hot standby made by \`pg_basebackup -R\`,
the machine's Redis for the shared rate limits (a key prefix of its own per run), the ERP and payment
simulators and a real SMTP server (\`smtp-server\`). All clients go through the balancer. Everything runs on the
same ${meta.cpus} cores, load generator included: absolute figures are those of a small box, the ratios are the point.

## (a) Punch delivery: 32 uploaders + 8 afterId pollers

Every uploader re-sends a batch until it is acknowledged; every poller repeats the same modem filter with
\`afterId\` = highest id received (specs/timing.yaml \`getPunches\`, polling guarantee).

| steady | |
|---|---|
${punchRows(f.punches)}

| timing2 SIGKILLed and restarted meanwhile | |
|---|---|
${punchRows(f.punchesKill)}

## (b) Live clients resuming through the balancer after their instance died

${f.live.streams} SSE clients (\`getPunchStream\`, reconnecting with \`Last-Event-ID\`) and ${f.live.longPolls} long-poll clients
(\`wait=5\`, repeating the same \`afterId\`) followed ${n0(f.live.punches)} punches while ${f.live.events.join('; ') || 'nothing was disrupted'}.
Reconnects of streams: ${n0(f.live.reconnects)}; repeated long-polls: ${n0(f.live.longPollRetries)}. Missed per client:
${f.live.missed.join(' ')}; repeated: ${f.live.repeated.join(' ')}. Guarantee: ${ok(f.live.violations)}.

## (c) Orders through both ordering instances while one is killed

| | |
|---|---|
| orders acknowledged | ${n0(f.orders.orders)} by ${f.orders.clients} clients in ${n1(f.orders.durationMs / 1000)} s (${n1(f.orders.ordersPerSecond)} orders/s), served by ${spread(f.orders.spread.byInstance)} |
| attempts retried with the same Idempotency-Key (5xx, network) | ${n0(f.orders.retries)} |
| stored orders | ${n0(f.orders.stored)} |
| confirmation messages (distinct Message-IDs) at the SMTP server | ${n0(f.orders.confirmationsReceived)} (orders without exactly one: ${f.orders.ordersWithoutExactlyOneMail}); the last arrived ${n0(f.orders.mailDrainMs)} ms after the order phase ended |
| the same message delivered again (outbox job of the killed instance re-run after its lease) | ${n0(f.orders.redeliveries)} |
| every key replayed twice: served by | ${spread(f.orders.replaySpread.byInstance)}; answered another order: ${f.orders.replayMismatches} |
| events | ${f.orders.events.join('; ')} |
| guarantee | ${ok(f.orders.violations)} |

Maintenance mode, switched through the balancer, closed the shop on all ${f.maintenance.instances} instances within
${n0(f.maintenance.enableSpreadMs)} ms and opened it within ${n0(f.maintenance.disableSpreadMs)} ms (each instance caches the flag for
at most a second); \`clear-caches\` reached ${f.maintenance.instancesCleared} of ${f.maintenance.instances} instances (their logs). ${ok(f.maintenance.violations)}.

## (d) Rate limits shared through Redis

${f.rateLimit.requests} discount-code validations of one caller (limit ${f.rateLimit.limitPerMinute} per minute) spread over the
instances: ${f.rateLimit.accepted} accepted, ${f.rateLimit.limited} answered 429 with \`Retry-After\`; per instance
${Object.entries(f.rateLimit.byInstance)
  .sort()
  .map(([k, v]) => `${k} ${v.accepted} accepted / ${v.limited} limited`)
  .join(', ')}. With per-instance counters the caller would have had ${f.rateLimit.limitPerMinute} per instance. ${ok(f.rateLimit.violations)}.

## (e) The streaming replica

While 16 uploaders loaded the primary, ${f.replica.samples} probe punches were uploaded one at a time and the standby
was read until each appeared: p50 ${n0(f.replica.visibleP50Ms)} ms, p95 ${n0(f.replica.visibleP95Ms)} ms, max ${n0(f.replica.visibleMaxMs)} ms after the
acknowledgement (\`pg_stat_replication.replay_lag\` at the end: ${f.replica.replayLagMs === null ? 'idle' : `${n1(f.replica.replayLagMs)} ms`}). After catch-up the
standby answered the same ${n0(f.replica.replicaRows)} punches in the same id order as the primary (${n0(f.replica.primaryRows)}). ${ok(f.replica.violations)}.

**Reading from the replica (\`TIMING_READ_DATABASE_URL\`)**: the gap-free rule of \`getPunches\` exposes a punch
only once every lower id is committed, judged by the snapshot's xmin; a hot standby's snapshot counts every
transaction the primary had open as running until its commit is replayed, so the standby never shows a row the
primary could still precede with a lower id — its answers are a gap-free prefix of the primary's, late by the lag
above. So the timing service sends only **whole downloads** there (\`getPunches\` without \`afterId\` and
without \`wait\`: exports, whole-event downloads, a poller's first page) and keeps polls with \`afterId\`,
long-polls and streams (LISTEN/NOTIFY) on the primary, where the lag would delay every new punch; an
unreachable replica falls back to the primary. \`test/topology/read-replica.test.ts\` proves the routing with
WAL replay paused on the standby. This scenario's instances read from the primary (the switch is off), so the
figures above are the replication itself.

## (f) Rolling restart under load

${f.rolling.requests} requests (${spread(f.rolling.byKind)}) by 16 clients **without client retries** while every instance
was stopped with SIGTERM one at a time, started again and awaited UP before the next (${n1(f.rolling.durationMs / 1000)} s):
**${f.rolling.failed} failed**${f.rolling.failed ? `: ${f.rolling.failures.slice(0, 5).join('; ')}` : ''}. ${
    f.rolling.failed
      ? 'Some requests failed: see the list; the drain or the balancer settings need attention before rolling releases are invisible.'
      : 'The drain (an instance keeps accepting until no new connection came for 100 ms, then closes its listener and answers in-flight requests with `Connection: close`) and HAProxy retrying a refused connection on another instance make a restart invisible to clients.'
  }
Events: ${f.rolling.events.join('; ')}.${
    f.rolling.events.some((e) => / exited (null|[1-9])/.test(e))
      ? `

**Finding**: an instance that "exited null" did not finish its graceful stop within 30 s and was SIGKILLed by the harness.
Its HTTP side was done at once (no inbound connection is left a few seconds after SIGTERM, so clients saw nothing);
what hangs is the ordering service's shutdown after the HTTP drain (\`onStopped\` in services/ordering/src/server.ts:
expiry sweeper, outbox dispatcher, listeners, pool) while orders were being placed; with only reads (shop articles) it
stops within about a second. An orchestrator's grace period (Kubernetes: 30 s) then ends it the same way: no request is
lost, but outbox jobs it had claimed wait for their lease (60 s) — see the late confirmations in (c).`
      : ''
  }

## (h) Rolling upgrade from the previous release

Two timing and two ordering instances started on the previous release (\`${f.upgrade.from}\`, built from git by
\`test/topology/release.ts\`) under load: 8 punch uploaders and 4 afterId pollers, 4 shop clients. The new release's
migrations ran while the old instances served, then each instance was stopped with SIGTERM and started on this
release (\`${f.upgrade.to}\`), one at a time, so old and new instances served together: ${ok(f.upgrade.violations)}.

- Punches: ${n0(f.upgrade.punches.punches)} uploaded and stored ${n0(f.upgrade.punches.stored)} times; pollers missed
  ${f.upgrade.punches.missed.join('/')} and received twice ${f.upgrade.punches.repeated.join('/')}; upload retries
  ${f.upgrade.punches.uploadRetries}, poll retries ${f.upgrade.punches.pollRetries} (5xx or refused while an instance restarted).
- Orders: ${f.upgrade.orders.orders} acknowledged, ${f.upgrade.orders.stored} stored, ${f.upgrade.orders.ordersWithoutExactlyOneMail} without exactly one
  confirmation; ${f.upgrade.orders.retries} retries with the same Idempotency-Key.
- Timing events: ${f.upgrade.punches.events.join('; ')}.
- Ordering events: ${f.upgrade.orders.events.join('; ')}.

How to do it in production: infra/README.md "Rolling upgrade".

## (g) Throughput by number of timing instances

32 uploaders (batches of 20 punches), then 32 pollers (pages of up to 1000 punches), each phase alone, through the balancer.

| timing instances | uploads/s | punches/s | polls/s | CPU while uploading | CPU while polling |
|---|---|---|---|---|---|
${tp.map((x) => `| ${x.instances} | ${n0(x.uploadsPerSecond)} | ${n0(x.punchesPerSecond)} | ${n0(x.pollsPerSecond)} | ${cpuText(x.uploadCpu, x.uploadSeconds)} | ${cpuText(x.pollCpu, x.pollSeconds)} |`).join('\n')}

What PostgreSQL's active backends were doing (sampled every 100 ms; \`CPU\` = running or runnable, else the wait event), and the machine's load average:

| timing instances | uploading | polling | load average (upload / poll phase) |
|---|---|---|---|
${tp.map((x) => `| ${x.instances} | ${waitsText(x.uploadWaits)} | ${waitsText(x.pollWaits)} | ${n1(x.loadAverage[0])} / ${n1(x.loadAverage[1])} |`).join('\n')}
${tp.some((x) => x.violations.length) ? `\nErrors: ${tp.flatMap((x) => x.violations).join('; ')}\n` : ''}
${throughputVerdict(tp, meta.cpus)}

## (i) Polls of a public event through the nginx cache

${cacheText(f.cache)}

${CAPACITY_MODEL}`;
}

const CAPACITY_MODEL = `## Capacity model

A model, not a measurement: it combines the figures above (a 2-core box, shared with other work) with the way
each request is served. Numbers marked ~ are assumptions about the sport, to be replaced by real ones.

### What one unit of load costs

- **Upload**: one durable commit (a batch of 1–20 punches from a modem or the reader app). Its limit is the WAL
  flush of the primary (section (g): the busy backends wait on \`WALWrite\`/\`WALSync\`), not the instances.
- **Poll** (\`getPunches\` with \`afterId\`): one indexed read of the filter's new rows; a full 1000-row page is CPU
  in PostgreSQL (rendering) and in the service (section (g)); a caught-up poll is mostly HTTP and key lookup.
- **Live client** (SSE stream or long-poll): parked on its instance's hub; every wake-up (each upload commit
  anywhere, notifications coalesced while one is in flight) makes **every** waiting client of that instance
  re-read its filter once (services/timing/src/live/hub.ts). So live reads per second ≈ open live clients ×
  wake-ups per second, whatever filter each follows — this is the term that grows fastest.
- **Order**: a handful of rows, one outbox e-mail, ERP and payment calls; tens per hour, a few per second at a
  season opening (compare section (c)). Never the bottleneck;
  two instances for availability.

### A national federation's season

~300 events a year, up to ~20 on a peak day with ~3,000 runners, ~60 modems and ~30 controls each: 1.8 million
punches that day. Mass starts bunch them: ~200 punches/s at the peak, in ~40 upload batches/s (modems batch
what arrived since their last send). Readers: ~5 result-software pollers per event every 2 s (~50 polls/s) and
live viewers on the organisers' live pages.

- Uploads and polls: ~40 uploads/s and ~50 polls/s are a tenth of what one timing instance did on the loaded
  2-core box in (g). One instance would do; **two** give failover and rolling releases (a, c, f).
- Live viewers: with ~40 wake-ups/s, each open stream costs ~40 small reads/s. 100 viewers ≈ 4,000 reads/s —
  more than the whole 2-core box served as polls in (g). So for the federation: **two timing instances and a
  4-core PostgreSQL server**, live pages for the organisers and officials (tens of viewers), and the public
  reading results from the result software's own site rather than one stream each on the service.
- Data: ~100 million punches a year, one table; no partitioning needed yet. A standby for failover
  (\`pg_basebackup -R\` as here) and \`TIMING_READ_DATABASE_URL\` on it for exports.

### A worldwide service

Many federations, thousands of events on a weekend, public live viewers in the thousands, billions of punches
over the years. What saturates, in order, and what is added then:

1. **Live fan-out** (viewers × wake-ups): the hub re-reads per waiting client. Before adding hardware, change
   the hub to read once per distinct filter, access scope and head position per wake-up and hand the same
   page to every waiter with that triple (they ask the identical query) — reads then grow with followed
   events, not with viewers. Then add timing instances: they are stateless, each holds one LISTEN session, and live slots are
   per instance (\`TIMING_MAX_LIVE_CONNECTIONS\`).
2. **Service CPU** (HTTP, JSON, key lookups): more timing instances behind the balancer, on more machines;
   Redis keeps rate limits shared (section (d)).
3. **PostgreSQL connections**: each instance holds a pool (10) plus its LISTEN session; beyond ~20 instances
   PgBouncer in transaction mode for the pools (the LISTEN sessions connect directly).
4. **PostgreSQL CPU on reads**: streaming replicas with \`TIMING_READ_DATABASE_URL\` take the whole downloads
   and exports (section (e)); polls with \`afterId\` and live reads stay on the primary, whose lag-free head
   they need.
5. **WAL flush on uploads**: a faster WAL device (NVMe, separate volume); group commit already merges
   concurrent commits. Only at tens of thousands of uploads per second does one primary run out: then shard
   by federation (separate clusters with their own services, routed by the balancer on the key's tenant).
6. **Size and retention**: partition \`timing.punches\` by month of the punch time and detach old seasons
   (below), so that retention is a detach, not a long DELETE that bloats and holds back the readers' xmin.

### Partitioning by time, with detach for retention (the migration it would take)

Partition key: the punch \`time\` (local milliseconds), by month. It is already part of the re-send key
\`punches_resend unique (modem, card, code, time, type)\`, so that constraint stays a real unique constraint on
the partitioned table (PostgreSQL requires unique keys to contain the partition key) and re-sent punches are
still stored once; the primary key becomes \`(id, time)\`. Reads that send \`after\` (result software sends the
event's zero time) touch only the partitions from that month on. A timing migration
(\`services/timing/src/db/migrations/00NN_partition_punches.ts\`), run in a release window — the copy takes minutes
per hundred million rows; uploads wait (modems retry) only during the final swap:

\`\`\`sql
-- 1. The partitioned table (same columns, id from its own identity sequence, moved past the old ids below).
create table timing.punches_p (like timing.punches including defaults including generated)
  partition by range (time);
alter table timing.punches_p alter column id add generated always as identity;
alter table timing.punches_p add primary key (id, time);
alter table timing.punches_p add constraint punches_p_resend unique (modem, card, code, time, type);
create index on timing.punches_p (modem, id);
-- 2. Monthly partitions (a scheduled job creates the coming months ahead) and a default partition.
create table timing.punches_2026_11 partition of timing.punches_p
  for values from (1793491200000) to (1796083200000);
create table timing.punches_default partition of timing.punches_p default;
-- 3. Copy in id batches while the service runs, then the rest and the swap in one short transaction.
insert into timing.punches_p overriding system value
  select * from timing.punches where id > $1 and id <= $1 + 1000000;
begin;
  lock table timing.punches in exclusive mode;
  insert into timing.punches_p overriding system value select * from timing.punches where id > $last;
  select setval(pg_get_serial_sequence('timing.punches_p', 'id'), (select max(id) from timing.punches_p));
  alter table timing.punches rename to punches_unpartitioned;
  alter table timing.punches_p rename to punches;
  -- functions that name the table (insert_punch_batch, the punch-count upkeep) are re-created here.
commit;
-- 4. Retention: a season leaves without a long DELETE (no bloat, no held-back xmin for the gap-free reads).
alter table timing.punches detach partition timing.punches_2024_11 concurrently;
-- then pg_dump -t timing.punches_2024_11 to the archive, and drop table timing.punches_2024_11;
\`\`\`

The gap-free rule (the row's txid against the snapshot's xmin) does not depend on the table layout and stays
as it is; \`afterId\` reads keep using \`(modem, id)\` per partition.

### What is added when

| load | timing instances | ordering instances | PostgreSQL | other |
|---|---|---|---|---|
| a club, a region | 1 (2 for rolling releases) | 1–2 | 1 small server | — |
| a national federation | 2 | 2 | 1 server, 4 cores, a standby (also for exports) | Redis for shared limits |
| several federations | 3–6 | 2 | primary + 1–2 replicas for downloads/exports | PgBouncer at ~20 pools |
| worldwide | as many as CPU and live slots need, after the per-filter hub reads | 2–3 | monthly partitions detached by season; read replicas | shard by federation when one primary's WAL runs out |
`;
