/**
 * The championship evening (scenario `championship-evening`, bench/README.md "Championship evening"): one public
 * event of {@link CHAMPIONSHIP_MODEMS} modems, followed by many spectators at once through the checked-in nginx
 * cache (infra/nginx/timing-cache.conf, started as test/support/nginx.ts starts it), in front of each server:
 * - MeOS polls CSV with `afterId` every 2–10 s; live results pages JSON every 3–10 s; ROC readers
 *   `getpunches.asp?unitId=…&lastId=…` every 1–5 s (services/timing/README.md "Real clients", docs/roc.md);
 * - open live pages on Server-Sent Events (ours only: PostgREST and the raw server have no streams);
 * - the modems post single punches (each with its owner's key) every 10–40 s, and once within one second at
 *   the mass start.
 * At scale 1: 10,000 spectators, 1,000 streams, 500 modems; smaller scales scale every count down.
 * PostgREST and the raw server are read with the event's modem list (as in the other scenarios); their ROC
 * readers poll JSON (neither has a ROC read); PostgREST has no upload, so its modems post to the raw server
 * directly (same database). Origin requests are counted from nginx's access log (upstream status set).
 * The modems (`UP-CE-…`, owned by the event's organiser) and the event exist only during the run.
 */
import { startNginxCache } from '../../test/support/nginx';
import { checkFollowed } from './database-probes';
import { cleanUploads, connect } from './dataset';
import type { LoadGenerator } from './load-generator';
import type { ChampionshipSpec, LoadResult, SpectatorKind } from './load-spec';
import type { InstanceName } from './scenarios';
import type { RunningServer } from './servers';
import { UPLOAD_MODEM_PREFIX, uploadKey } from './upload-fixtures';

/** Modems of the championship event at scale 1. */
const CHAMPIONSHIP_MODEMS = 500;

/** The upload user who owns the event and its modems. */
const ORGANISER = 1;

/** Serial prefix of its modems (`UP-…`: dataset.ts `cleanUploads` removes their punches too). */
const MODEM_PREFIX = `${UPLOAD_MODEM_PREFIX}CE-`;

const EVENT_NAME = 'Bench championship evening';

/** Spectators by client at scale 1, and their poll intervals (seconds). */
const SPECTATORS: { kind: SpectatorKind; count: number; intervalSeconds: [number, number] }[] = [
  { kind: 'meos', count: 2_000, intervalSeconds: [2, 10] },
  { kind: 'live', count: 6_000, intervalSeconds: [3, 10] },
  { kind: 'roc', count: 2_000, intervalSeconds: [1, 5] },
];

/** Poll interval of the freshness probes (one per spectator request, every scale). */
const PROBE_INTERVAL_SECONDS = 0.1;

/** Open live pages (SSE streams) at scale 1. */
const STREAMS = 1_000;

/** The counts of a scale: every count scaled, at least one (two modems). */
export interface ChampionshipPlan {
  spectators: { kind: SpectatorKind; count: number; intervalSeconds: [number, number] }[];
  streams: number;
  modems: number;
}

/** The plan at `scale` (1 = 10,000 spectators, 1,000 streams, 500 modems). */
export function championshipPlan(scale: number): ChampionshipPlan {
  const n = (x: number) => Math.max(1, Math.round(x * Math.min(1, scale)));
  // At least two modems, so that even the smallest scale reads an event of several modems.
  return { spectators: SPECTATORS.map((s) => ({ ...s, count: n(s.count) })), streams: n(STREAMS), modems: Math.max(2, n(CHAMPIONSHIP_MODEMS)) };
}

/** The event and its modems (with their owners' keys), created by {@link prepareChampionship}. */
export interface ChampionshipSetup {
  plan: ChampionshipPlan;
  eventId: number;
  modems: { serial: string; key: string }[];
}

/** Removes the championship event, its modems and their punches (idempotent). */
export async function removeChampionship(url: string): Promise<void> {
  const client = await connect(url);
  try {
    // The counter triggers name their tables unqualified.
    await client.query('set search_path = timing, public');
    await client.query(`delete from punches where modem like '${MODEM_PREFIX}%'`);
    await client.query('delete from events where name = $1', [EVENT_NAME]);
    await client.query(`delete from modems where serial like '${MODEM_PREFIX}%'`);
    await client.query('select compact_punch_counts()');
  } finally {
    await client.end();
  }
}

/**
 * Creates the public championship event of `plan.modems` modems, all registered to the event's organiser (upload
 * user 1, `bench-up-01`): an event covers only its owner's modems (docs/architecture.md, flow a), as a
 * championship's modems are the organiser's. Every modem posts with the organiser's key.
 */
export async function prepareChampionship(url: string, plan: ChampionshipPlan): Promise<ChampionshipSetup> {
  await removeChampionship(url);
  const client = await connect(url);
  try {
    await client.query('set search_path = timing, public');
    const modems = Array.from({ length: plan.modems }, (_, i) => ({
      serial: `${MODEM_PREFIX}${String(i + 1).padStart(3, '0')}`,
      user: ORGANISER,
    }));
    await client.query(
      `insert into modems (serial, user_id)
       select m.serial, u.id from unnest($1::text[], $2::int[]) m(serial, k) join users u on u.user_name = 'bench-up-' || lpad(m.k::text, 2, '0')`,
      [modems.map((m) => m.serial), modems.map((m) => m.user)],
    );
    const { rows } = await client.query<{ id: number }>(
      "insert into events (name, owner_id, is_public) select $1, id, true from users where user_name = 'bench-up-01' returning id",
      [EVENT_NAME],
    );
    const eventId = rows[0].id;
    await client.query('insert into event_modems (event_id, modem) select $1, unnest($2::text[])', [eventId, modems.map((m) => m.serial)]);
    return { plan, eventId, modems: modems.map((m) => ({ serial: m.serial, key: uploadKey(m.user) })) };
  } finally {
    await client.end();
  }
}

/** What one server's championship evening measured (load-spec.ts `ChampionshipLoad` plus the harness's counts). */
export interface ChampionshipFigures {
  spectators: number;
  /** Freshness probes (one per spectator request); in the gap-free check, not in the polls served. */
  probes?: number;
  streams: number;
  modems: number;
  polls: Record<SpectatorKind, number>;
  /** Requests nginx sent to the server (its access log). */
  originRequests: number;
  /** The polls among them (GET and HEAD but streams: uploads and streams left out). */
  originPolls?: number;
  /** nginx's requests by cache status (access log `$upstream_cache_status`; `-` not cacheable). */
  cacheStatuses: Record<string, number>;
  uploaded: number;
  uploadErrors: number;
  pollErrors: number;
  streamDeliveries: number;
  /** Upload → arrival at a spectator (ms) over every (spectator, punch) pair. */
  delivery: { count: number; p50: number; p99: number; max: number };
  /** Upload → arrival on an SSE stream (ms) over every (stream, punch) pair. */
  streamDelivery: { count: number; p50: number; p99: number; max: number };
  /** Upload → arrival at a freshness probe polling every 100 ms (ms): how late a punch is visible through the cache. */
  visible?: { count: number; p50: number; p99: number; max: number };
  /** The same for the mass start's punches (`visible` holds the others'). */
  visibleBurst?: { count: number; p50: number; p99: number; max: number };
  /** Upload round trips (sent → answered, ms) of the regular punches, and of the mass start's. */
  upload?: { count: number; p50: number; p99: number; max: number };
  uploadBurst?: { count: number; p50: number; p99: number; max: number };
  /** Clients (spectators and streams) whose punches were not each exactly once, ascending; must be 0. */
  gapFreeViolations: number;
  /** Clients that had not received the scope's newest punch when the catch-up time ran out; must be 0. */
  incomplete: number;
  /** `incomplete` by client kind (`meos`, `live`, `roc`, `probe`, `stream`). */
  incompleteByClient?: Record<string, number>;
  /** The first incomplete spectator's last answer (for the log). */
  firstIncomplete?: string;
  /** Event-loop delay of the load process's spectators' and streams' thread (ms), included in their latencies. */
  loadProcessDelay?: { p50: number; p99: number; max: number };
  /** Event-loop delay of its modems' and probes' thread (ms), included in the upload and upload → visible times. */
  modemThreadDelay?: { p50: number; p99: number; max: number };
  /** The first violating client's record against the database (for the log), if any. */
  firstViolation?: string;
  /** What differs from ours for this server (no ROC, no streams, uploads elsewhere). */
  notes: string[];
}

const delay = (d?: { p50: number; p99: number; max: number }) => (d ? `${d.p50.toFixed(0)}/${d.p99.toFixed(0)}/${d.max.toFixed(0)} ms` : '–');
const figures = (f?: { p50: number; p99: number }) => (f ? `${f.p50.toFixed(0)}/${f.p99.toFixed(0)} ms` : '–');

/** Log lines of one server's evening: counts, failures and statuses, and the first violating client if any. */
export function championshipLog(instance: InstanceName, c: ChampionshipFigures, load: LoadResult): string[] {
  return [
    `  ${instance}: ${c.uploaded} uploaded, ${c.uploadErrors} failed uploads, ${c.pollErrors} failed polls, ${c.incomplete} incomplete ${JSON.stringify(c.incompleteByClient ?? {})}, ${c.originRequests} origin requests, statuses ${JSON.stringify(load.statusBuckets)}, event-loop delay p50/p99/max of the clients' thread ${delay(c.loadProcessDelay)} and of the modems' ${delay(c.modemThreadDelay)}, upload round trip p50/p99 ${figures(c.upload)} (mass start ${figures(c.uploadBurst)}), upload → visible p50/p99 ${c.visible ? `${c.visible.p50.toFixed(0)}/${c.visible.p99.toFixed(0)} ms` : '–'} (mass start ${c.visibleBurst ? `${c.visibleBurst.p50.toFixed(0)}/${c.visibleBurst.p99.toFixed(0)} ms` : '–'})`,
    ...(c.firstViolation ? [`  gap-free violation: ${c.firstViolation}`] : []),
    ...(c.firstIncomplete ? [`  first incomplete client: ${c.firstIncomplete}`] : []),
  ];
}

const JSON_ACCEPT = { accept: 'application/json' };
const CSV_ACCEPT = { accept: 'text/csv' };

/** The spectators' requests to `instance` (`{afterId}` filled in by each spectator). */
function spectatorPaths(instance: InstanceName, setup: ChampionshipSetup): ChampionshipSpec['spectators'] {
  const serials = setup.modems.map((m) => m.serial);
  const poll =
    instance === 'postgrest'
      ? `/punches?modem=in.(${serials.join(',')})&id=gt.{afterId}&order=id&limit=1000`
      : instance === 'raw'
        ? `/punches?modem=${serials.join(',')}&afterId={afterId}`
        : `/api/rest/v1/punches?eventId=${setup.eventId}&afterId={afterId}`;
  return setup.plan.spectators.map((s) => {
    if (s.kind === 'meos') return { ...s, path: poll, format: 'csv', headers: CSV_ACCEPT };
    if (s.kind === 'roc' && instance === 'ours-shared')
      return { ...s, path: `/getpunches.asp?unitId=${setup.eventId}&lastId={afterId}`, format: 'roc', headers: {} };
    return { ...s, path: poll, format: 'json', headers: JSON_ACCEPT };
  });
}

/**
 * Starts nginx in front of `server`, runs the evening from the load process and returns its load result;
 * `finish` (after the harness read its CPU probes) counts the origin requests, stops nginx, checks every
 * client's punches against the database and removes the punches the modems posted.
 */
export async function runChampionship(
  loader: LoadGenerator,
  o: { instance: InstanceName; server: RunningServer; raw?: RunningServer; setup: ChampionshipSetup; databaseUrl: string; durationSeconds: number },
): Promise<{ load: LoadResult; finish(): Promise<ChampionshipFigures> }> {
  const { plan } = o.setup;
  const spectators = plan.spectators.reduce((a, s) => a + s.count, 0);
  const streams = o.instance === 'ours-shared' ? plan.streams : 0;
  // Both sides of every connection: spectators, streams, modems, and headroom for the upstream.
  const nginx = await startNginxCache(new URL(o.server.baseUrl).host, {
    workerConnections: 2 * (spectators + streams + plan.modems) + 1024,
    // PostgREST echoes the whole query (500 modems) in Content-Location: response headers beyond nginx's 4 KiB
    // default buffer are a 502. The same for every server.
    httpDirectives: ['proxy_buffer_size 8k;'],
  });
  const client = await connect(o.databaseUrl);
  const { rows } = await client.query<{ id: string }>('select coalesce(max(id), 0) as id from timing.punches');
  await client.end();
  const startAfterId = Number(rows[0].id);
  const notes: string[] = [];
  let uploadUrl = `${nginx.url}/api/rest/v1/punches`;
  if (o.instance === 'raw') uploadUrl = `${nginx.url}/punches`;
  if (o.instance === 'postgrest') {
    if (!o.raw) throw new Error('championship-evening on PostgREST needs the raw server for the uploads');
    uploadUrl = `${o.raw.baseUrl}/punches`;
    notes.push('modems post to the raw server directly (PostgREST has no upload)');
  }
  if (o.instance !== 'ours-shared') notes.push('ROC readers poll JSON (no ROC read)', 'no SSE streams');
  const spec: ChampionshipSpec = {
    baseUrl: nginx.url,
    spectators: spectatorPaths(o.instance, o.setup),
    probes: spectatorPaths(o.instance, o.setup).map((s) => ({ ...s, count: 1, intervalSeconds: [PROBE_INTERVAL_SECONDS, PROBE_INTERVAL_SECONDS] })),
    streams: streams > 0 ? { count: streams, path: `/api/rest/v1/punches/stream?eventId=${o.setup.eventId}&afterId=${startAfterId}` } : null,
    modems: o.setup.modems,
    uploadUrl,
    modemIntervalSeconds: [10, 40],
    burstAtSeconds: o.durationSeconds * 0.4,
    startAfterId,
    databaseUrl: o.databaseUrl,
    // The longest poll interval, nginx's max-age and a margin for a load process that falls behind its timers
    // (10,000 spectators on a 2-core machine: 4 of 11,003 clients missed a 10 s margin).
    catchUpSeconds: Math.max(...plan.spectators.map((s) => s.intervalSeconds[1])) + 40,
  };
  let load: LoadResult;
  try {
    load = await loader.run({
      url: nginx.url,
      method: 'GET',
      headers: {},
      connections: spectators + streams,
      durationSeconds: o.durationSeconds,
      championship: spec,
    });
  } catch (err) {
    await nginx.stop();
    throw err;
  }
  return {
    load,
    async finish() {
      const originRequests = nginx.originRequests();
      const originPolls = nginx.originPolls();
      const cacheStatuses = nginx.cacheStatuses();
      await nginx.stop();
      const gap = await checkFollowed(
        o.databaseUrl,
        o.setup.modems.map((m) => m.serial),
        load,
      );
      await cleanUploads(o.databaseUrl);
      const c = load.championship!;
      return {
        spectators,
        probes: spec.probes.length,
        streams,
        modems: plan.modems,
        polls: c.polls,
        originRequests,
        originPolls,
        cacheStatuses,
        uploaded: c.uploaded,
        uploadErrors: c.uploadErrors,
        pollErrors: c.pollErrors,
        streamDeliveries: c.streamDeliveries,
        delivery: c.delivery,
        streamDelivery: c.streamDelivery,
        visible: c.visible,
        visibleBurst: c.visibleBurst,
        gapFreeViolations: gap.violations,
        incomplete: c.incomplete,
        incompleteByClient: c.incompleteByClient,
        firstIncomplete: c.firstIncomplete,
        upload: c.upload,
        uploadBurst: c.uploadBurst,
        loadProcessDelay: c.loadProcessDelay,
        modemThreadDelay: c.modemThreadDelay,
        firstViolation: gap.firstViolation,
        notes,
      };
    },
  };
}
