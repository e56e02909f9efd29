/**
 * Kysely table types of the `timing` schema. Columns mirror the migrations in `./migrations`.
 * int8 columns arrive as JS numbers (shared type parser); timestamptz as Date.
 */
import type { ColumnType, Generated, GeneratedAlways } from 'kysely';
import type { PunchColumnValues } from './punch-row';

/** A timestamptz column defaulting to now(). */
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

/** `users`: people and systems holding API keys. */
export interface UsersTable {
  id: GeneratedAlways<number>;
  user_name: string;
  role: 'admin' | 'user';
  created_at: CreatedAt;
}

/** `api_keys`: SHA-256 hashes of issued keys. */
export interface ApiKeysTable {
  id: GeneratedAlways<number>;
  user_id: number;
  key_hash: Buffer;
  prefix: string;
  name: string;
  created_at: CreatedAt;
  revoked_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When the key last authenticated a request, to 60 s (migration 0014; users/key-uses.ts, docs/decisions.md §5 "Key last used"). */
  last_used_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** `modems`: serial number → the user it belongs to. */
interface ModemsTable {
  serial: string;
  user_id: number;
  created_at: CreatedAt;
}

/** `events`: a named set of modems with an optional local-time window (local wall-clock ms). */
interface EventsTable {
  id: GeneratedAlways<number>;
  name: string;
  owner_id: number;
  is_public: Generated<boolean>;
  from_ms: number | null;
  to_ms: number | null;
  created_at: CreatedAt;
}

/** `event_modems`: the modems of each event. */
interface EventModemsTable {
  event_id: number;
  modem: string;
}

/**
 * `punches`: the punch row's columns (punch-row.ts; `time` local wall-clock ms, `reception_time_utc` UTC ms),
 * `id` from its sequence; `txid` set by the database.
 */
type PunchesTable = Omit<PunchColumnValues, 'id'> & { id: GeneratedAlways<number>; txid: ColumnType<string, never, never> };

/** `upload_quota`: punches charged to a user per UTC day (migration 0009). */
interface UploadQuotaTable {
  user_id: number;
  day: ColumnType<Date, string, string>;
  punches: ColumnType<string, number, number>;
}

/** The `timing` schema. */
export interface DB {
  users: UsersTable;
  api_keys: ApiKeysTable;
  modems: ModemsTable;
  events: EventsTable;
  event_modems: EventModemsTable;
  punches: PunchesTable;
  upload_quota: UploadQuotaTable;
}
