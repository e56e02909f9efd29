/**
 * The floor of what Node can do: a bare `node:http` + `pg` server on the same database that runs
 * the timing service's own page statements (imported, so the SQL is the same by construction; JSON as
 * PostgreSQL renders it, where the service converts its CSV rendering when it can) and passes
 * the JSON/CSV text PostgreSQL builds straight through. No framework, no validation, no access control.
 *
 * - `GET /punches?modem=A,B&afterId=N[&count=exact]` with `Accept: text/csv` for CSV (JSON otherwise) and
 *   `Accept-Encoding: gzip` (zlib level 1, bodies ≥ 1 KiB, like the timing service); `count=exact` adds
 *   `X-Total-Count` from the timing service's exact count statement.
 * - `POST /punches` with header `apikey` and a JSON array body (`Content-Encoding: gzip` allowed): one
 *   statement that checks the key and inserts with a plain INSERT … ON CONFLICT DO NOTHING (no gap-free
 *   section, no modem ownership) — the reference insert rate. Replies `{ received, stored, duplicates }`.
 *
 * Run as a process: `RAW_DATABASE_URL=… RAW_PORT=… node --import tsx bench/src/raw-server.ts`; prints
 * `listening <port>` when ready and stops when its parent's IPC channel closes.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import pg from 'pg';
import { CLIENT_FIELDS, PUNCH_ROW, type ClientField } from '@sports-timing/timing/src/db/punch-row';
import { countPunches, PUNCH_SESSION_SETTINGS, readPunchPage, type PunchFormat, type PunchScope } from '@sports-timing/timing/src/punches/punches.repository';

const gzip = promisify(zlib.gzip);
const gunzip = promisify(zlib.gunzip);

/** Same threshold and level as the timing service's response compression. */
const GZIP_THRESHOLD_BYTES = 1024;
const GZIP_LEVEL = 1;
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** Options of {@link startRawServer}. */
interface RawServerOptions {
  databaseUrl: string;
  port: number;
  host?: string;
  /** Pool size; 10 like the timing service's default. */
  poolSize?: number;
}

/** A running raw server. */
interface RawServer {
  port: number;
  close(): Promise<void>;
}

/** A punch as posted: the fields a client sends (the punch row's, db/punch-row.ts). */
type UploadPunch = Record<ClientField, string | number>;

function send(res: http.ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw Object.assign(new Error('body too large'), { status: 413 });
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzip(raw) : raw;
}

/** The columns of the fields a client sends, in the punch row's order. */
const SENT_COLUMNS = CLIENT_FIELDS.map((f) => PUNCH_ROW[f].column).join(', ');

/**
 * The insert: `$1` the key's hash, then one array per field a client sends (its upload array type), then the
 * reception time of the whole batch.
 */
const INSERT_SQL = `
  with caller as (
    select k.user_id from api_keys k where k.key_hash = $1 and k.revoked_at is null
  ), ins as (
    insert into punches (${SENT_COLUMNS}, ${PUNCH_ROW.receptionTimeUtc.column})
    select ${CLIENT_FIELDS.map((f) => `t.${PUNCH_ROW[f].column}`).join(', ')}, $${CLIENT_FIELDS.length + 2}
    from unnest(${CLIENT_FIELDS.map((f, i) => `$${i + 2}::${PUNCH_ROW[f].uploadArray}`).join(', ')}) with ordinality as t(${SENT_COLUMNS}, ord)
    where exists (select 1 from caller)
    order by t.ord
    on conflict on constraint punches_resend do nothing
    returning 1
  )
  select exists (select 1 from caller) as authorized, (select count(*)::int from ins) as stored`;

/** Starts the server; resolves once it listens. */
async function startRawServer(opts: RawServerOptions): Promise<RawServer> {
  const pool = new pg.Pool({
    connectionString: opts.databaseUrl,
    max: opts.poolSize ?? 10,
    application_name: 'bench-raw',
    // The timing service's session settings: its page statement (prepared, like ours) is planned with them.
    options: `-c search_path=timing,public ${Object.entries(PUNCH_SESSION_SETTINGS)
      .map(([k, v]) => `-c ${k}=${v}`)
      .join(' ')}`,
  });
  pool.on('error', () => undefined);

  async function read(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const modems = [...new Set((url.searchParams.get('modem') ?? '').split(',').filter((s) => s.length > 0))];
    if (modems.length === 0) return send(res, 400, 'modem required');
    const scope: PunchScope = { modems, afterId: Number(url.searchParams.get('afterId') ?? 0), timeFrom: null, timeTo: null };
    const format: PunchFormat = (req.headers.accept ?? '').includes('text/csv') ? 'csv' : 'json';
    const withCount = url.searchParams.get('count') === 'exact';
    const [page, total] = await Promise.all([readPunchPage(pool, scope, format, false), withCount ? countPunches(pool, scope) : Promise.resolve(undefined)]);
    const headers: Record<string, string> = {
      'Content-Type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    };
    if (total !== undefined) headers['X-Total-Count'] = String(total);
    let body: string | Buffer = page.body;
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) && Buffer.byteLength(body) >= GZIP_THRESHOLD_BYTES) {
      body = await gzip(body, { level: GZIP_LEVEL });
      headers['Content-Encoding'] = 'gzip';
    }
    send(res, 200, body, headers);
  }

  async function upload(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const key = req.headers.apikey;
    if (typeof key !== 'string' || key.length === 0) return send(res, 401, 'key required');
    const punches = JSON.parse((await readBody(req)).toString('utf8')) as UploadPunch[];
    if (!Array.isArray(punches)) return send(res, 400, 'array expected');
    const { rows } = await pool.query<{ authorized: boolean; stored: number }>(INSERT_SQL, [
      createHash('sha256').update(key, 'utf8').digest(),
      ...CLIENT_FIELDS.map((f) => punches.map((p) => (f === 'card' ? String(Number(p.card)) : p[f]))),
      Date.now(),
    ]);
    if (!rows[0].authorized) return send(res, 401, 'unknown key');
    const stored = rows[0].stored;
    send(res, 200, JSON.stringify({ received: punches.length, stored, duplicates: punches.length - stored }), { 'Content-Type': 'application/json' });
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://raw');
    const handle =
      url.pathname === '/punches' && req.method === 'GET'
        ? read(req, res, url)
        : url.pathname === '/punches' && req.method === 'POST'
          ? upload(req, res)
          : url.pathname === '/healthz'
            ? Promise.resolve(send(res, 200, 'ok'))
            : Promise.resolve(send(res, 404, 'not found'));
    handle.catch((err: { status?: number; message?: string }) => {
      if (!res.headersSent) send(res, err.status ?? 500, err.message ?? 'error');
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(opts.port, opts.host ?? '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

if (require.main === module) {
  const databaseUrl = process.env.RAW_DATABASE_URL;
  if (!databaseUrl) {
    process.stderr.write('RAW_DATABASE_URL is required\n');
    process.exit(2);
  }
  startRawServer({ databaseUrl, port: Number(process.env.RAW_PORT ?? 0) })
    .then((srv) => {
      process.stdout.write(`listening ${srv.port}\n`);
      const stop = () => void srv.close().finally(() => process.exit(0));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      if (process.send) process.on('disconnect', stop);
    })
    .catch((err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    });
}
