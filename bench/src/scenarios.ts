/**
 * Scenarios and how each server is asked for the same thing.
 *
 * Our timing service is asked the way result software asks it (`eventId`, or `modem=a,b`, plus `afterId`);
 * PostgREST with its own syntax for the same keyset query (`modem=in.(…)&id=gt.N&order=id&limit=1000`);
 * the raw server with the event's modem list. Since no event has a time window, all three select exactly
 * the same punches (checked before loading, see run.ts).
 */
import type { DatasetInfo } from './dataset';
import type { UploadKind } from './load-spec';

/**
 * A server instance in a scenario: the three punch servers, ours on the 1 M-punch dataset, the shop. `ours`
 * runs with the shared read answers off (`TIMING_READ_CACHE_MB=0`), so that scenarios repeating one request
 * measure the read itself; `ours-shared` is the same service as deployed (answers shared, 64 MiB), for the
 * scenarios of many clients.
 */
export type InstanceName = 'ours' | 'ours-shared' | 'postgrest' | 'raw' | 'ours-1m' | 'ordering';

/** One HTTP request shape. */
export interface RequestShape {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Scenario groups (for `--only` and the report's sections). */
type ScenarioGroup = 'read' | 'popular' | 'fixed-rate' | 'upload' | 'flat' | 'shop' | 'championship';

/** A scenario. */
export interface Scenario {
  id: string;
  group: ScenarioGroup;
  title: string;
  /** What the request reads or writes, for the report. */
  description: string;
  instances: InstanceName[];
  /** Expected response format of reads (for the id check): JSON, CSV, or ROC text lines. */
  format?: 'json' | 'csv' | 'roc';
  connections: number;
  /** Fixed total rate (req/s) for p99 measurements; unset = throughput. */
  overallRate?: number;
  upload?: { kind: UploadKind; batchSize: number };
  /** A request header made unique per request by the load generator. */
  uniqueHeader?: string;
  /**
   * Live clients: each connection follows the head (the request path holds `{afterId}`, replaced by the
   * highest id the connection received, from the big event's tail), while `writesPerSecond` upload batches
   * arrive on the big event's modems; the run checks every connection's punches against the database.
   */
  follow?: { writesPerSecond: number };
  /** The follow clients are Server-Sent-Events streams (open live pages) instead of polls. */
  streams?: boolean;
  /**
   * Shop: each run lasts until the ordering outbox has no job left (the orders' e-mails sent, their paylink
   * jobs done); the sustained rate and the CPU per order count that time.
   */
  drainsOutbox?: boolean;
  /** The championship evening (championship.ts): its own load through nginx, checked afterwards; no pre-load check. */
  championship?: boolean;
  request(instance: InstanceName, ds: DatasetInfo): RequestShape;
}

const JSON_ACCEPT = { accept: 'application/json' };
const CSV_ACCEPT = { accept: 'text/csv' };
const GZIP_JSON = { accept: 'application/json', 'accept-encoding': 'gzip' };

/** Connections of throughput runs: enough to keep every pool (10 connections) busy. */
const CONNECTIONS = 16;

/** Middle id of the big event (a full page in the middle of the evening). */
function midAfterId(ds: DatasetInfo): number {
  return ds.bigEventMidId;
}

function read(
  instance: InstanceName,
  ds: DatasetInfo,
  q: { eventId?: number; modems: string[]; afterId: number; count?: boolean },
  headers: Record<string, string>,
): RequestShape {
  if (instance === 'postgrest') {
    return {
      method: 'GET',
      path: `/punches?modem=in.(${q.modems.join(',')})&id=gt.${q.afterId}&order=id&limit=1000`,
      headers: q.count ? { ...headers, prefer: 'count=exact' } : headers,
    };
  }
  if (instance === 'raw') {
    return { method: 'GET', path: `/punches?modem=${q.modems.join(',')}&afterId=${q.afterId}${q.count ? '&count=exact' : ''}`, headers };
  }
  const filter = q.eventId !== undefined ? `eventId=${q.eventId}` : `modem=${q.modems.join(',')}`;
  return { method: 'GET', path: `/api/rest/v1/punches?${filter}&afterId=${q.afterId}`, headers };
}

const THREE: InstanceName[] = ['ours', 'postgrest', 'raw'];

/** Connections of the popular-event scenarios: live clients of one event. */
const POPULAR_CONNECTIONS = 300;

/** Upload batches per second on the popular event (1–3 punches each: an event's evening rate). */
const POPULAR_WRITES = 20;

/** A live client's poll of the big event from `{afterId}` (the placeholder the load generator fills in). */
const popularPoll = (headers: Record<string, string>) => (instance: InstanceName, ds: DatasetInfo) => {
  const shape = read(instance, ds, { eventId: ds.bigEventId, modems: ds.bigEventModems, afterId: -1 }, headers);
  return { ...shape, path: shape.path.replace(/gt\.-1|afterId=-1/, (m) => m.replace('-1', '{afterId}')) };
};

const bigPage = (headers: Record<string, string>) => (instance: InstanceName, ds: DatasetInfo) =>
  read(instance, ds, { eventId: ds.bigEventId, modems: ds.bigEventModems, afterId: midAfterId(ds) }, headers);

const tailPoll = (instance: InstanceName, ds: DatasetInfo) =>
  read(instance, ds, { eventId: ds.bigEventId, modems: ds.bigEventModems, afterId: ds.tailAfterId }, JSON_ACCEPT);

const countPage = (count: boolean) => (instance: InstanceName, ds: DatasetInfo) =>
  read(instance, ds, { eventId: ds.bigEventId, modems: ds.bigEventModems, afterId: 0, count }, JSON_ACCEPT);

/** The order of the shop-orders scenario (the demo catalogue's BSF8 station: no card number to claim). */
const ORDER_BODY = {
  contact: { firstName: 'Bench', lastName: 'Runner', email: 'bench@example.com', culture: 'de-CH' },
  shippingAddress: { firstName: 'Bench', lastName: 'Runner', address1: 'Hauptstraße 1', zip: '10115', city: 'Berlin', countryCode: 'DE' },
  billingAddressIsSameAsShippingAddress: true,
  orderItems: [{ articleNumber: 'BSF8', quantity: 1 }],
};

/** Every scenario, in run order (reads first, uploads last: the cleanup after them restores the table). */
const SCENARIOS: Scenario[] = [
  {
    id: 'page-json',
    group: 'read',
    title: 'Full page, JSON',
    description: '1000 punches from the middle of the big event (60 modems), JSON',
    instances: THREE,
    format: 'json',
    connections: CONNECTIONS,
    request: bigPage(JSON_ACCEPT),
  },
  {
    id: 'page-csv',
    group: 'read',
    title: 'Full page, CSV',
    description: 'the same page as CSV (`Accept: text/csv`)',
    instances: THREE,
    format: 'csv',
    connections: CONNECTIONS,
    request: bigPage(CSV_ACCEPT),
  },
  {
    id: 'page-gzip',
    group: 'read',
    title: 'Full page, JSON, gzip',
    description: 'the same page with `Accept-Encoding: gzip` (PostgREST has no response compression of its own)',
    instances: THREE,
    format: 'json',
    connections: CONNECTIONS,
    request: bigPage(GZIP_JSON),
  },
  {
    id: 'small-event',
    group: 'read',
    title: 'Small event page',
    description: 'all punches of a small event (4 modems, a short page) from afterId=0',
    instances: THREE,
    format: 'json',
    connections: CONNECTIONS,
    request: (instance, ds) => read(instance, ds, { eventId: ds.smallEventId, modems: ds.smallEventModems, afterId: 0 }, JSON_ACCEPT),
  },
  {
    id: 'two-modem',
    group: 'read',
    title: 'Two-modem filter',
    description: '`modem=A,B` (two modems of the big event) from the middle of the event',
    instances: THREE,
    format: 'json',
    connections: CONNECTIONS,
    request: (instance, ds) => read(instance, ds, { modems: ds.bigEventModems.slice(0, 2), afterId: midAfterId(ds) }, JSON_ACCEPT),
  },
  {
    id: 'tail-poll',
    group: 'read',
    title: 'Tail poll at the head',
    description: 'big event, `afterId` 5 punches below its newest id (the steady state of live clients)',
    instances: THREE,
    format: 'json',
    connections: CONNECTIONS,
    request: tailPoll,
  },
  {
    id: 'popular-json',
    group: 'popular',
    title: 'Popular event, live clients, JSON',
    description: `${POPULAR_CONNECTIONS} clients poll the head of the big event (public), each with \`afterId\` = the newest id it has, while ${POPULAR_WRITES} upload batches a second (1–3 punches) move the head; ours as deployed (identical polls share one answer)`,
    instances: ['ours-shared', 'postgrest', 'raw'],
    format: 'json',
    connections: POPULAR_CONNECTIONS,
    follow: { writesPerSecond: POPULAR_WRITES },
    request: popularPoll(JSON_ACCEPT),
  },
  {
    id: 'popular-csv',
    group: 'popular',
    title: 'Popular event, live clients, CSV',
    description: 'the same as CSV (`Accept: text/csv`, as MeOS reads)',
    instances: ['ours-shared', 'postgrest', 'raw'],
    format: 'csv',
    connections: POPULAR_CONNECTIONS,
    follow: { writesPerSecond: POPULAR_WRITES },
    request: popularPoll(CSV_ACCEPT),
  },
  {
    id: 'popular-sse',
    group: 'popular',
    title: "Popular event, the organiser's live page open in many browsers",
    description: `${POPULAR_CONNECTIONS} Server-Sent-Events streams of the big event (\`GET /api/rest/v1/punches/stream\`, as the live page opens it) from its tail while ${POPULAR_WRITES} upload batches a second arrive; ours only (PostgREST and the raw server have no streams). req/s = punches delivered per second over all streams; p50/p99 = delay from the batch's commit to the punch's arrival on a stream; CPU per punch delivered`,
    instances: ['ours-shared'],
    connections: POPULAR_CONNECTIONS,
    follow: { writesPerSecond: POPULAR_WRITES },
    streams: true,
    request: (_instance, ds) => ({
      method: 'GET',
      path: `/api/rest/v1/punches/stream?eventId=${ds.bigEventId}&afterId={afterId}`,
      headers: { accept: 'text/event-stream' },
    }),
  },
  {
    id: 'championship-evening',
    group: 'championship',
    title: 'Championship evening through the nginx cache',
    description:
      'at scale 1 10,000 spectators (MeOS CSV every 2–10 s, live pages JSON every 3–10 s, ROC readers every 1–5 s, each from its newest id), 1,000 SSE streams (ours only) and 500 modems posting single punches every 10–40 s with a mass start (every modem within one second), all through infra/nginx/timing-cache.conf; req/s = polls served per second; p50/p99 = upload → arrival at a spectator (polls; the streams apart)',
    instances: ['ours-shared', 'postgrest', 'raw'],
    connections: 11_000,
    championship: true,
    request: tailPoll,
  },
  {
    id: 'roc-tail-poll',
    group: 'read',
    title: 'ROC tail poll at the head',
    description:
      'the tail poll as ROC readers (MeOS with the ROC protocol, RadioSender, fartOLa) send it: `GET /getpunches.asp?unitId=<event>&lastId=<5 below the newest>`, no headers, text lines (ours only: the other servers have no ROC read)',
    instances: ['ours'],
    format: 'roc',
    connections: CONNECTIONS,
    request: (_instance, ds) => ({ method: 'GET', path: `/getpunches.asp?unitId=${ds.bigEventId}&lastId=${ds.tailAfterId}`, headers: {} }),
  },
  {
    id: 'page-first',
    group: 'read',
    title: 'First page, no count',
    description: 'big event from afterId=0 without a count (PostgREST and raw; ours always counts, see count-1m)',
    instances: ['postgrest', 'raw'],
    format: 'json',
    connections: CONNECTIONS,
    request: countPage(false),
  },
  {
    id: 'count-1m',
    group: 'read',
    title: 'First page with X-Total-Count',
    description: 'big event from afterId=0 with the total (ours: always; PostgREST: `Prefer: count=exact`; raw: exact `count(*)`)',
    instances: THREE,
    format: 'json',
    connections: CONNECTIONS,
    request: countPage(true),
  },
  {
    id: 'p99-poll',
    group: 'fixed-rate',
    title: 'Tail poll at 1,500 req/s',
    description: 'the tail poll at a fixed total rate of 1,500 req/s',
    instances: THREE,
    format: 'json',
    connections: 32,
    overallRate: 1500,
    request: tailPoll,
  },
  {
    id: 'p99-page',
    group: 'fixed-rate',
    title: 'Full page at 150 req/s',
    description: 'the full JSON page at a fixed total rate of 150 req/s',
    instances: THREE,
    format: 'json',
    connections: 32,
    overallRate: 150,
    request: bigPage(JSON_ACCEPT),
  },
  {
    id: 'flat-page',
    group: 'flat',
    title: 'Full page at 5 M vs 1 M punches',
    description: 'the full JSON page of the big event (same shape) on the 5 M-punch table and on a table holding only that event',
    instances: ['ours', 'ours-1m'],
    format: 'json',
    connections: CONNECTIONS,
    request: (_instance, ds) => read('ours', ds, { eventId: ds.bigEventId, modems: ds.bigEventModems, afterId: midAfterId(ds) }, JSON_ACCEPT),
  },
  {
    id: 'flat-count',
    group: 'flat',
    title: 'First page + count at 5 M vs 1 M punches',
    description: 'the first page of the big event with its X-Total-Count on both tables',
    instances: ['ours', 'ours-1m'],
    format: 'json',
    connections: CONNECTIONS,
    request: (_instance, ds) => read('ours', ds, { eventId: ds.bigEventId, modems: ds.bigEventModems, afterId: 0 }, JSON_ACCEPT),
  },
  {
    id: 'upload-single',
    group: 'upload',
    title: 'Upload, single punch',
    description: 'one-punch JSON POSTs, 50 users with their own keys, 200 modems',
    instances: ['ours', 'raw'],
    connections: CONNECTIONS,
    upload: { kind: 'single', batchSize: 1 },
    request: (instance) => ({ method: 'POST', path: instance === 'raw' ? '/punches' : '/api/rest/v1/punches', headers: {} }),
  },
  {
    id: 'upload-batch',
    group: 'upload',
    title: 'Upload, 1000-punch batches',
    description: '1000-punch JSON POSTs',
    instances: ['ours', 'raw'],
    connections: 8,
    upload: { kind: 'batch', batchSize: 1000 },
    request: (instance) => ({ method: 'POST', path: instance === 'raw' ? '/punches' : '/api/rest/v1/punches', headers: {} }),
  },
  {
    id: 'upload-gzip',
    group: 'upload',
    title: 'Upload, gzip 1000-punch batches',
    description: '1000-punch JSON POSTs with `Content-Encoding: gzip`',
    instances: ['ours', 'raw'],
    connections: 8,
    upload: { kind: 'batchGzip', batchSize: 1000 },
    request: (instance) => ({ method: 'POST', path: instance === 'raw' ? '/punches' : '/api/rest/v1/punches', headers: {} }),
  },
  {
    id: 'shop-articles',
    group: 'shop',
    title: 'Shop article list at 500 req/s',
    description: 'anonymous `GET /api/grpc-json/v1/shop/articles` (demo catalogue) at a fixed 500 req/s',
    instances: ['ordering'],
    connections: 32,
    overallRate: 500,
    request: () => ({ method: 'GET', path: '/api/grpc-json/v1/shop/articles', headers: { accept: 'application/json', 'accept-language': 'en' } }),
  },
  {
    id: 'shop-siids',
    group: 'shop',
    title: 'Random free SIIDs',
    description: '`GET /api/grpc-json/v1/shop/siids/siac1/random-free-siids?numberOfServiceIds=10`',
    instances: ['ordering'],
    connections: CONNECTIONS,
    request: () => ({
      method: 'GET',
      path: '/api/grpc-json/v1/shop/siids/siac1/random-free-siids?numberOfServiceIds=10',
      headers: { accept: 'application/json' },
    }),
  },
  {
    id: 'shop-orders',
    group: 'shop',
    title: 'Order creation with its outbox',
    description:
      '`POST /api/grpc-json/v1/shop/orders`: an anonymous order of one BSF8 station shipped to Berlin, a distinct `Idempotency-Key` per request, so every request creates an order with its confirmation e-mail in the outbox (same transaction) and, after the commit, its paylink at the payment simulator with the payment-link e-mail; each run ends once the outbox is empty again (both e-mails of every order written)',
    instances: ['ordering'],
    connections: CONNECTIONS,
    uniqueHeader: 'idempotency-key',
    drainsOutbox: true,
    request: () => ({
      method: 'POST',
      path: '/api/grpc-json/v1/shop/orders',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(ORDER_BODY),
    }),
  },
];

/** Scenarios selected by `--only` (ids or group names); all when empty. Unknown names throw. */
export function selectScenarios(only: string[]): Scenario[] {
  if (only.length === 0) return SCENARIOS;
  const known = new Set([...SCENARIOS.map((s) => s.id), ...SCENARIOS.map((s) => s.group)]);
  const unknown = only.filter((o) => !known.has(o));
  if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${[...known].join(', ')}`);
  return SCENARIOS.filter((s) => only.includes(s.id) || only.includes(s.group));
}
