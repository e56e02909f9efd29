/**
 * `punches tail`: follows an event's or some modems' punches live. Uses the SSE stream and falls back to
 * long-polling (`wait`) when the service has no stream operation; prints punches or appends them as rows
 * of the download CSV format to a file. The position is the last id written: on restart it is read back
 * from the CSV file (or the state file), so a restarted tail neither repeats nor misses a punch.
 */
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, readSync, fstatSync, ftruncateSync, writeFileSync, renameSync } from 'node:fs';
import { PUNCH_FIELDS, TimingApiError, type Punch, type PunchFilter, type TimingClient } from '@sports-timing/timing-client';

/** Header row of the download CSV format (specs/timing.yaml, the CSV form of `getPunches`). */
const CSV_HEADER = PUNCH_FIELDS.join(',');

/** Options of {@link tail}. */
export interface TailOptions {
  filter: PunchFilter;
  /** Append rows to this CSV file (header written when the file is new or empty). */
  csvFile?: string;
  /** JSON file `{ "lastId": n }` rewritten after each punch (for printing mode, or in addition to the CSV). */
  stateFile?: string;
  /** First request's `after` (local ms). */
  after?: number;
  /** Never try the stream, long-poll only. */
  pollOnly?: boolean;
  signal?: AbortSignal;
  /** Punch line sink when no CSV file is given (stdout in the CLI). */
  print?: (line: string) => void;
  /** Status line sink (stderr in the CLI). */
  status?: (line: string) => void;
  /** Prefix each printed line with the Unix ms it was received (latency measurements). */
  timestamps?: boolean;
  /** The service's address, named by the lines of a tail that never connected. */
  url?: string;
  /** Stop after this many punches (a check in a script); default: run until aborted. */
  max?: number;
  /**
   * Give up when the service has been unreachable (or answering 5xx) this long without a success in
   * between (ms; default 60,000): the CLI then exits non-zero instead of retrying for ever.
   */
  giveUpMs?: number;
}

/** Thrown when {@link tail} gives up after `giveUpMs` of failures; the message names the last error. */
class TailGaveUp extends Error {}

/** One punch as a CSV row of the download format (numbers unquoted). */
function csvRow(p: Punch): string {
  return PUNCH_FIELDS.map((f) => p[f]).join(',');
}

/** Local ms → `YYYY-MM-DD HH:MM:SS.sss` (the event's wall clock), as tail prints it. */
export function localTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/**
 * Last id in a CSV file written by tail. A row cut short by a crash (no final newline) is removed first,
 * so the file again ends with a complete row; it is fetched again.
 */
function lastIdInCsv(file: string): number {
  if (!existsSync(file)) return 0;
  const fd = openSync(file, 'r+');
  try {
    const size = fstatSync(fd).size;
    const tailBytes = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(tailBytes);
    readSync(fd, buf, 0, tailBytes, size - tailBytes);
    let text = buf.toString('utf8');
    const lastNl = text.lastIndexOf('\n');
    if (lastNl < text.length - 1) {
      ftruncateSync(fd, size - Buffer.byteLength(text.slice(lastNl + 1), 'utf8'));
      text = text.slice(0, lastNl + 1);
    }
    const rows = text.split('\n').filter((l) => /^\d+,/.test(l));
    return rows.length > 0 ? Number(rows[rows.length - 1].split(',')[0]) : 0;
  } finally {
    closeSync(fd);
  }
}

function lastIdInState(file: string): number {
  if (!existsSync(file)) return 0;
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { lastId?: unknown };
  return typeof parsed.lastId === 'number' ? parsed.lastId : 0;
}

/** Runs until `signal` aborts (or a non-retryable error); resolves with the last id written. */
export async function tail(client: TimingClient, o: TailOptions): Promise<number> {
  // An own controller: aborted by the caller's signal, after `max` punches, or when giving up.
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  if (o.signal?.aborted) ac.abort();
  const giveUpMs = o.giveUpMs ?? 60_000;
  let failingSince: number | undefined;
  let gaveUp: string | undefined;
  // Whether the service ever answered (a page, an open stream, a keep-alive): before that, a failure is no
  // interruption of anything, and the lines say that it never connected.
  let connected = false;
  const where = o.url ? ` to ${o.url}` : '';
  const failed = (what: string, err: unknown) => {
    const reason = err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err);
    failingSince ??= Date.now();
    const seconds = Math.round((Date.now() - failingSince) / 1000);
    if (Date.now() - failingSince >= giveUpMs) {
      gaveUp = connected
        ? `gave up after ${seconds} s of failures (last: ${reason})`
        : `gave up after ${seconds} s: never connected${where} (last: ${reason}); check --url / TIMING_URL and that the service runs`;
      ac.abort();
      return;
    }
    o.status?.(connected ? `tail: ${what} (${reason}), retrying` : `tail: not connected${where} yet (${reason}), retrying`);
  };
  const succeeded = () => {
    connected = true;
    failingSince = undefined;
  };
  let lastId = Math.max(o.csvFile ? lastIdInCsv(o.csvFile) : 0, o.stateFile ? lastIdInState(o.stateFile) : 0);
  if (o.csvFile && (!existsSync(o.csvFile) || readFileSync(o.csvFile, 'utf8').length === 0)) writeFileSync(o.csvFile, `${CSV_HEADER}\n`);
  o.status?.(lastId > 0 ? `tail: resuming after id ${lastId}` : 'tail: starting from the first punch');
  let count = 0;
  const deliver = (p: Punch) => {
    if (p.id <= lastId || (o.max !== undefined && count >= o.max)) return;
    if (o.csvFile) appendFileSync(o.csvFile, `${csvRow(p)}\n`);
    else o.print?.(`${o.timestamps ? `${Date.now()}\t` : ''}${p.id}\t${p.card}\t${localTime(p.time)}\t${p.code}\t${p.type}\t${p.modem}`);
    lastId = p.id;
    count += 1;
    succeeded();
    if (o.max !== undefined && count >= o.max) ac.abort();
    if (o.stateFile) {
      writeFileSync(`${o.stateFile}.tmp`, JSON.stringify({ lastId }));
      renameSync(`${o.stateFile}.tmp`, o.stateFile);
    }
  };
  // A progress line only when something arrived since the last one (an idle tail stays quiet).
  let reported = 0;
  const progress = setInterval(() => {
    if (count === reported) return;
    reported = count;
    o.status?.(`tail: ${count} punches, last id ${lastId}`);
  }, 5_000);
  const finish = () => {
    if (gaveUp) throw new TailGaveUp(`tail: ${gaveUp}`);
    return lastId;
  };
  try {
    if (ac.signal.aborted) return finish();
    if (!o.pollOnly) {
      try {
        await client.stream(o.filter, deliver, {
          afterId: lastId,
          after: o.after,
          signal: ac.signal,
          onOpen: () => {
            succeeded();
            o.status?.('tail: following live (SSE)');
          },
          onKeepAlive: succeeded,
          onError: (err) => failed('stream interrupted', err),
        });
        return finish();
      } catch (err) {
        // A service without the stream operation: fall back to long-polling. Access errors are final.
        if (!(err instanceof TimingApiError) || ![404, 405, 406, 501].includes(err.status)) throw err;
        o.status?.(`tail: no stream (${err.status}), long-polling instead`);
      }
    }
    o.status?.('tail: following live (long-poll)');
    await client.poll(o.filter, (punches) => punches.forEach(deliver), {
      afterId: lastId,
      after: o.after,
      wait: 30,
      signal: ac.signal,
      onPage: succeeded,
      onError: (err) => failed('poll failed', err),
    });
    return finish();
  } finally {
    clearInterval(progress);
    o.signal?.removeEventListener('abort', onAbort);
  }
}
