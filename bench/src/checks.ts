/**
 * The checks before any load (run.ts step 3): one request per scenario and server — reads must return the
 * same punch ids in the same order from every server, an upload must store its two punches, and a shop
 * scenario's probe tells whether the ordering service can be measured at all.
 */
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { DatasetInfo } from './dataset';
import { uploadKey, uploadModem, UPLOAD_MODEMS_PER_USER, UPLOAD_USERS } from './upload-fixtures';
import type { Check } from './results';
import type { InstanceName, RequestShape, Scenario } from './scenarios';
import { ROOT, type RunningServer } from './servers';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One HTTP request of `shape` to `baseUrl`, the whole body buffered (2 min timeout). */
function request(baseUrl: string, shape: RequestShape): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${shape.path}`, { method: shape.method, headers: shape.headers, timeout: 120_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(shape.body);
  });
}

/** Punch ids of a JSON array, a CSV body (first column after the header) or ROC text (first field of each CRLF line). */
export function punchIds(text: string, format: 'json' | 'csv' | 'roc'): number[] {
  if (format === 'json') return (JSON.parse(text) as { id: number }[]).map((p) => Number(p.id));
  if (format === 'roc') {
    return text
      .split('\r\n')
      .filter((l) => l.length > 0)
      .map((l) => Number(l.split(';', 1)[0]));
  }
  return text
    .split('\n')
    .slice(1)
    .filter((l) => l.length > 0)
    .map((l) => Number(l.split(',', 1)[0]));
}

function totalOf(headers: http.IncomingHttpHeaders): number | null {
  const x = headers['x-total-count'];
  if (typeof x === 'string') return Number(x);
  const range = headers['content-range'];
  if (typeof range === 'string') {
    const t = range.split('/')[1];
    return t && t !== '*' ? Number(t) : null;
  }
  return null;
}

/** Whether two id lists are equal element by element. */
export function sameArray(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** A scenario's request with a live client's `{afterId}` placeholder set to the big event's tail. */
export function requestAt(sc: Scenario, instance: InstanceName, ds: DatasetInfo): RequestShape {
  const shape = sc.request(instance, ds);
  return sc.follow ? { ...shape, path: shape.path.replace('{afterId}', String(ds.tailAfterId)) } : shape;
}

/** One read of `sc` from `server`: status, bytes, encoding and the punch ids with the total; `error` set when it failed. */
export async function checkRead(sc: Scenario, instance: InstanceName, server: RunningServer, ds: DatasetInfo): Promise<Check> {
  const shape = requestAt(sc, instance, ds);
  try {
    const res = await request(server.baseUrl, shape);
    const encoding = res.headers['content-encoding'] ?? null;
    const text = (encoding === 'gzip' ? zlib.gunzipSync(res.body) : res.body).toString('utf8');
    // PostgREST answers a counted partial result with 206 Partial Content.
    if (res.status !== 200 && res.status !== 206)
      return {
        scenario: sc.id,
        instance,
        status: res.status,
        bodyBytes: res.body.length,
        contentEncoding: encoding,
        error: `${shape.path}: ${text.slice(0, 300)}`,
      };
    const ids = punchIds(text, sc.format ?? 'json');
    return {
      scenario: sc.id,
      instance,
      status: res.status,
      bodyBytes: res.body.length,
      contentEncoding: encoding,
      ids,
      idCount: ids.length,
      firstId: ids[0] ?? null,
      lastId: ids[ids.length - 1] ?? null,
      total: totalOf(res.headers),
    };
  } catch (err) {
    return { scenario: sc.id, instance, status: 0, bodyBytes: 0, contentEncoding: null, error: (err as Error).message };
  }
}

/** The dataset's upload users, each with its key and modems (dataset.ts), for the upload scenarios' load. */
export function uploadUsers(): { key: string; modems: string[] }[] {
  return Array.from({ length: UPLOAD_USERS }, (_, u) => ({
    key: uploadKey(u + 1),
    modems: Array.from({ length: UPLOAD_MODEMS_PER_USER }, (_, m) => uploadModem(u + 1, m + 1)),
  }));
}

/** One upload of two new punches to `server`; `error` set unless it answered 200 with `stored: 2`. */
export async function checkUpload(sc: Scenario, instance: InstanceName, server: RunningServer, ds: DatasetInfo): Promise<Check> {
  const shape = sc.request(instance, ds);
  const t = Date.now();
  const body = JSON.stringify([
    { card: '1234567', time: t, code: 31, type: 'Control', modem: uploadModem(1, 1) },
    { card: '1234567', time: t + 1, code: 32, type: 'Control', modem: uploadModem(1, 2) },
  ]);
  try {
    const res = await request(server.baseUrl, { ...shape, headers: { apikey: uploadKey(1), 'content-type': 'application/json' }, body });
    const text = res.body.toString('utf8');
    const stored = res.status === 200 ? (JSON.parse(text) as { stored: number }).stored : -1;
    return {
      scenario: sc.id,
      instance,
      status: res.status,
      bodyBytes: res.body.length,
      contentEncoding: null,
      ...(stored === 2 ? {} : { error: `expected 200 with stored=2, got ${res.status}: ${text.slice(0, 300)}` }),
    };
  } catch (err) {
    return { scenario: sc.id, instance, status: 0, bodyBytes: 0, contentEncoding: null, error: (err as Error).message };
  }
}

/**
 * One request of a shop scenario to the ordering service; `unavailable` says why the scenario cannot be
 * measured (no handler yet, or the probe was refused), absent when it answered 200.
 */
export async function probeShop(sc: Scenario, server: RunningServer, ds: DatasetInfo): Promise<{ check: Check; unavailable?: string }> {
  const base = sc.request('ordering', ds);
  const shape = sc.uniqueHeader ? { ...base, headers: { ...base.headers, [sc.uniqueHeader]: `bench-probe-${process.pid}-${Date.now()}` } } : base;
  try {
    const res = await request(server.baseUrl, shape);
    const text = res.body.toString('utf8');
    const check: Check = {
      scenario: sc.id,
      instance: 'ordering',
      status: res.status,
      bodyBytes: res.body.length,
      contentEncoding: (res.headers['content-encoding'] as string) ?? null,
    };
    if (res.status === 200) return { check };
    const operation = `\`${shape.method} ${shape.path.split('?')[0]}\``;
    if (res.status === 501) return { check, unavailable: `not available yet: ${operation} answers 501 (no handler in the ordering service)` };
    if (sc.id === 'shop-orders') {
      // The spec validator answers 400 before dispatch, so an unimplemented operation looks like a bad body.
      if (!orderingHandlerExists('createShopOrder')) {
        return {
          check,
          unavailable: `not available yet: the ordering service has no \`createShopOrder\` handler (services/ordering/src/http); ${operation} answers ${res.status} to the probe`,
        };
      }
      return { check, unavailable: `not measured: ${operation} answered ${res.status} to the probe order: ${text.slice(0, 300)}` };
    }
    return { check, unavailable: `not measured: the probe answered ${res.status}: ${text.slice(0, 200)}` };
  } catch (err) {
    return {
      check: { scenario: sc.id, instance: 'ordering', status: 0, bodyBytes: 0, contentEncoding: null, error: (err as Error).message },
      unavailable: (err as Error).message,
    };
  }
}

/** Whether any handler file of the ordering service defines `operationId` (a source check, no import). */
function orderingHandlerExists(operationId: string): boolean {
  const dir = path.join(ROOT, 'services/ordering/src/http');
  try {
    return readdirSync(dir).some((f) => f.endsWith('.ts') && new RegExp(`\\b${operationId}\\s*[(:]`).test(readFileSync(path.join(dir, f), 'utf8')));
  } catch {
    return false;
  }
}
