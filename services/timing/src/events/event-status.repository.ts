/**
 * SQL of the event status (`getEventStatus`, the organiser's live page): one statement, so that total, modem
 * rows, minute buckets, newest punches and `lastId` come from one snapshot. Visibility is the readers' rule of
 * the punch reads (`visibleRow`, db/punch-visibility-rule.ts: `txid` below the own-writers horizon, migration
 * 0012), so `lastId` is a point below which every punch is counted and from which the punch stream continues
 * without a gap. The punch columns are the punch row's (db/punch-row.ts).
 */
import type pg from 'pg';
import { PUNCH_API_COLUMNS, punchColumns, type PunchRowValues } from '../db/punch-row';
import { visibleRow } from '../db/punch-visibility-rule';

/** The scope of an event: its modems and window (local wall-clock ms, each bound optional). */
export interface EventScope {
  modems: readonly string[];
  timeFrom: number | null;
  timeTo: number | null;
}

/** A modem row as read (bigints as numbers; null times without punches). */
interface ModemStatusRow {
  serial: string;
  codes: number[];
  punches: number;
  lastPunchTime: number | null;
  lastUploadUtc: number | null;
}

/** A punch as the API `Punch`. */
type StatusPunch = PunchRowValues;

/** Most (minute, code) buckets in a status, the newest (spec `EventStatus.perMinute`). */
const MAX_MINUTE_BUCKETS = 5000;

/** Most control codes listed per modem, the lowest (spec `ModemStatus.codes`). */
const MAX_CODES_PER_MODEM = 256;

/** What {@link readEventStatus} returns. */
export interface EventStatusRow {
  total: number;
  lastId: number;
  lastMinute: number;
  modems: ModemStatusRow[];
  perMinute: { minute: number; code: number; punches: number }[];
  recent: StatusPunch[];
}

const STATUS_SQL = `
with scope as materialized (
  select ${punchColumns()}
  from punches
  where modem = any($1::text[])
    and ($2::bigint is null or time >= $2::bigint)
    and ($3::bigint is null or time <= $3::bigint)
    and ${visibleRow(null)}
)
select
  (select count(*) from scope)::bigint as total,
  (select coalesce(max(id), 0) from scope)::bigint as last_id,
  (select count(*) from scope where reception_time_utc > $4::bigint)::bigint as last_minute,
  (select coalesce(json_agg(m order by m.serial), '[]'::json) from (
     select modem as serial, (array_agg(distinct code order by code))[1:$7] as codes, count(*) as punches,
            max(time) as "lastPunchTime", max(reception_time_utc) as "lastUploadUtc"
     from scope group by modem) m) as modems,
  (select coalesce(json_agg(b order by b.minute, b.code), '[]'::json) from (
     select (time - (time % 60000)) as minute, code, count(*) as punches
     from scope group by 1, 2 order by 1 desc, 2 limit $6) b) as per_minute,
  (select coalesce(json_agg(r order by r.id desc), '[]'::json) from (
     select ${PUNCH_API_COLUMNS}
     from scope order by id desc limit $5) r) as recent`;

/**
 * Reads the status of an event's scope in one statement: counts, per-modem rows (only modems with punches;
 * the service adds the silent ones; at most 256 codes each), the newest 5,000 per-minute buckets, the
 * `recent` newest punches; `sinceUtc` is the
 * reception time (UTC ms) after which a punch counts for `lastMinute`.
 */
export async function readEventStatus(pool: pg.Pool, scope: EventScope, sinceUtc: number, recent: number): Promise<EventStatusRow> {
  const { rows } = await pool.query<{
    total: string;
    last_id: string;
    last_minute: string;
    modems: ModemStatusRow[];
    per_minute: { minute: number; code: number; punches: number }[];
    recent: StatusPunch[];
  }>(STATUS_SQL, [scope.modems, scope.timeFrom, scope.timeTo, sinceUtc, recent, MAX_MINUTE_BUCKETS, MAX_CODES_PER_MODEM]);
  const r = rows[0];
  return {
    total: Number(r.total),
    lastId: Number(r.last_id),
    lastMinute: Number(r.last_minute),
    modems: r.modems.map((m) => ({ ...m, punches: Number(m.punches), lastPunchTime: Number(m.lastPunchTime), lastUploadUtc: Number(m.lastUploadUtc) })),
    perMinute: r.per_minute.map((b) => ({ minute: Number(b.minute), code: b.code, punches: Number(b.punches) })),
    recent: r.recent.map((p) => ({ ...p, id: Number(p.id), time: Number(p.time), receptionTimeUtc: Number(p.receptionTimeUtc) })),
  };
}
