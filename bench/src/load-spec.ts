/**
 * What the harness (run.ts) and its load process (load-worker.ts) exchange over IPC: a load run's spec, its
 * measured result, and the request and reply messages around them.
 */

/** Body generators of upload scenarios. */
export type UploadKind = 'single' | 'batch' | 'batchGzip';

/** One load run. */
export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Fixed request body (uploads generate theirs). */
  body?: string;
  /** A header that gets a value unique to each request (e.g. `idempotency-key`, so every order is new). */
  uniqueHeader?: string;
  connections: number;
  durationSeconds: number;
  /** Fixed total request rate (req/s); unset = as fast as possible. */
  overallRate?: number;
  /**
   * Live clients at the head: every connection polls `template` with `{afterId}` replaced by the highest id
   * it has received (starting at `startAfterId`), as RadioSender or a live page does.
   */
  follow?: { template: string; format: 'json' | 'csv'; startAfterId: number };
  /**
   * Open pages of a live page: `spec.connections` Server-Sent-Events streams of `spec.url` (from `startAfterId`),
   * held for the run; each stream's punches are recorded for the gap-free check, and each punch's delay from
   * the writer's commit to its arrival is the latency.
   */
  streams?: { startAfterId: number };
  /**
   * Punches arriving meanwhile: `ratePerSecond` batches of 1–`maxBatch` punches on `modems`, by the gap-free
   * upload function (as the service stores them, admin user `userId`) and its NOTIFY, from this process on
   * one connection (application_name `bench-writer`, left out of the PostgreSQL CPU figures).
   */
  writer?: { databaseUrl: string; modems: string[]; ratePerSecond: number; maxBatch: number; userId: number };
  /** The championship evening (championship-load.ts): spectators, streams and modems together. */
  championship?: ChampionshipSpec;
  upload?: {
    kind: UploadKind;
    batchSize: number;
    /** Keys and the modems of each key's user. */
    users: { key: string; modems: string[] }[];
  };
}

/** A spectator's client: MeOS (CSV with `afterId`), a live results page (JSON), a ROC reader (`getpunches.asp`). */
export type SpectatorKind = 'meos' | 'live' | 'roc';

/**
 * The championship evening of one server behind nginx (bench/src/championship.ts): spectators polling at their
 * clients' intervals (`paths` with `{afterId}`, by kind), SSE streams (`streamPath`, ours only), and modems
 * posting single punches (`uploadUrl`, each modem with its owner's key) at an evening's rate plus one
 * mass-start burst (every modem once within one second).
 */
export interface ChampionshipSpec {
  /** nginx in front of the server, `http://127.0.0.1:port`. */
  baseUrl: string;
  spectators: {
    kind: SpectatorKind;
    count: number;
    intervalSeconds: [number, number];
    path: string;
    format: 'json' | 'csv' | 'roc';
    headers: Record<string, string>;
  }[];
  /**
   * Freshness probes: one poller per spectator request, asking every 100 ms, so that its arrivals time how long a
   * punch takes to become visible through the cache (the spectators' arrivals add their own interval).
   */
  probes: ChampionshipSpec['spectators'];
  streams: { count: number; path: string } | null;
  modems: { serial: string; key: string }[];
  uploadUrl: string;
  /** Seconds between one modem's punches (uniform in the range). */
  modemIntervalSeconds: [number, number];
  /** When the mass start's burst begins, seconds after the start. */
  burstAtSeconds: number;
  startAfterId: number;
  /** For the newest id of the scope once the modems stopped (the spectators poll until they have it). */
  databaseUrl: string;
  /** Longest wait for every spectator and stream to reach that id, seconds. */
  catchUpSeconds: number;
}

/** The championship figures of the load process (latencies in ms). */
interface ChampionshipLoad {
  polls: Record<SpectatorKind, number>;
  pollErrors: number;
  streamsOpen: number;
  streamDeliveries: number;
  uploaded: number;
  uploadErrors: number;
  /** Upload → arrival at a spectator (poll), every (spectator, punch) pair. */
  delivery: { count: number; p50: number; p99: number; max: number };
  /** Upload → arrival on an SSE stream, every (stream, punch) pair. */
  streamDelivery: { count: number; p50: number; p99: number; max: number };
  /** Upload → arrival at a freshness probe (`ChampionshipSpec.probes`), every (probe, punch) pair but the mass start's. */
  visible: { count: number; p50: number; p99: number; max: number };
  /** The same for the mass start's punches. */
  visibleBurst: { count: number; p50: number; p99: number; max: number };
  /** Upload round trips (sent → answered) of the regular punches, and of the mass start's. */
  upload: { count: number; p50: number; p99: number; max: number };
  uploadBurst: { count: number; p50: number; p99: number; max: number };
  /** Polls the probes made (not in `polls`). */
  probePolls: number;
  /** Event-loop delay of the load process's spectators' and streams' thread (ms): included in their latencies. */
  loadProcessDelay: { p50: number; p99: number; max: number };
  /** Event-loop delay of the modems' and probes' thread (ms), included in the upload and upload → visible times. */
  modemThreadDelay: { p50: number; p99: number; max: number };
  /** Newest id of the scope after the modems stopped, and the clients that had not reached it in time. */
  finalId: number;
  incomplete: number;
  /** `incomplete` by client kind (`meos`, `live`, `roc`, `probe`, `stream`). */
  incompleteByClient: Record<string, number>;
  /** The first incomplete spectator's last answer (for the log). */
  firstIncomplete?: string;
}

/** What a run measured (latencies in ms). */
export interface LoadResult {
  requests: number;
  durationSeconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Response bytes per request as autocannon counts them (headers included). */
  bytesPerRequest: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Status code counts (autocannon's 1xx…5xx buckets). */
  statusBuckets: Record<string, number>;
  /** With `follow`: per connection, the afterId it started from, the last id received, the count and sum of ids received, and ids out of order. */
  followed?: { start: number; last: number; count: number; sum: number; outOfOrder: number }[];
  /** With `writer`: punches written during the run. */
  written?: number;
  /** With `championship`. */
  championship?: ChampionshipLoad;
}

/** Message to the worker: a spec with an id; the reply carries the same id. */
export interface LoadRequest {
  id: number;
  spec: LoadSpec;
}

/** Reply of the worker. */
export type LoadReply = { id: number; ok: true; result: LoadResult } | { id: number; ok: false; error: string };
