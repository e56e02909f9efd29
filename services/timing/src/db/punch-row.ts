/**
 * The punch row, one entry per field of the spec's `Punch` (specs/timing.yaml): which `punches` column holds
 * it, the PostgreSQL array type the upload function `upload_punches` (`db/functions/upload_punches.v<N>.sql`) takes it as,
 * who supplies it and its JavaScript value kind. The readers' column lists (page statements, event status), the
 * upload's arrays and `$n::type[]` parameters and the CSV upload's required and ignored columns are rendered
 * from it (docs/architecture.md "Adding a punch field").
 *
 * The spec stays the source of the field list and order: punches/punch-spec.ts refuses to load when the spec's
 * `Punch` or `NewPunch` disagrees with this table (`punchRowProblems`), and the compiler holds its keys to the
 * generated `Punch` type. It sits in `db/`, next to the table types, because both `punches/` and `events/`
 * (below `punches/`, docs/architecture.md "Folder layers") read punch rows.
 */
import type { components } from '../generated/openapi';

/** API `Punch`. */
type Punch = components['schemas']['Punch'];

/** JavaScript value kind of a field: `text` a string, `integer` a safe-integer number (int8 milliseconds fit). */
type PunchValueKind = 'text' | 'integer';

/** One field of the punch row. */
interface PunchColumn {
  /** The column of `punches`. */
  column: string;
  /**
   * Type of the field's array parameter of `upload_punches`, as the upload call casts it (`$n::int8[]`);
   * null when the function assigns the value itself (`id`, from the punch id sequence).
   */
  uploadArray: 'text[]' | 'int8[]' | 'int4[]' | null;
  /** `client`: sent in an upload (a `NewPunch` property); `service`: assigned by the service (`id`, `receptionTimeUtc`). */
  sentBy: 'client' | 'service';
  kind: PunchValueKind;
}

/** The punch row in the spec's `Punch` order; see the module comment. */
export const PUNCH_ROW = {
  id: { column: 'id', uploadArray: null, sentBy: 'service', kind: 'integer' },
  card: { column: 'card', uploadArray: 'text[]', sentBy: 'client', kind: 'text' },
  time: { column: 'time', uploadArray: 'int8[]', sentBy: 'client', kind: 'integer' },
  code: { column: 'code', uploadArray: 'int4[]', sentBy: 'client', kind: 'integer' },
  type: { column: 'type', uploadArray: 'text[]', sentBy: 'client', kind: 'text' },
  modem: { column: 'modem', uploadArray: 'text[]', sentBy: 'client', kind: 'text' },
  receptionTimeUtc: { column: 'reception_time_utc', uploadArray: 'int8[]', sentBy: 'service', kind: 'integer' },
} as const satisfies { readonly [F in keyof Punch]-?: PunchColumn };

type Row = typeof PUNCH_ROW;

/** A field of the punch row (a `Punch` property). */
export type PunchField = keyof Row;

/** The fields in table order. */
export const PUNCH_ROW_FIELDS = Object.keys(PUNCH_ROW) as PunchField[];

/** The fields the upload function takes as arrays (every field but `id`). */
export type UploadField = { [F in PunchField]: Row[F]['uploadArray'] extends null ? never : F }[PunchField];

/** The fields a client sends (the `NewPunch` properties). */
export type ClientField = { [F in PunchField]: Row[F]['sentBy'] extends 'client' ? F : never }[PunchField];

/** The value of a field as the JavaScript side holds it. */
type ValueOf<F extends PunchField> = Row[F]['kind'] extends 'text' ? string : number;

/** A punch as read from `punches` with the API's names (`text` fields strings, `integer` ones numbers). */
export type PunchRowValues = { -readonly [F in PunchField]: ValueOf<F> };

/** A punch row by column name (`reception_time_utc`), values as {@link PunchRowValues}: the `punches` table's type (schema.ts). */
export type PunchColumnValues = { -readonly [F in PunchField as Row[F]['column']]: ValueOf<F> };

/** A punch as the upload function takes it: the {@link UploadField}s (`time` local wall-clock ms, `receptionTimeUtc` UTC ms). */
export type PunchInsert = { -readonly [F in UploadField]: ValueOf<F> };

/** {@link UploadField}s in table order: the order of `upload_punches`'s array parameters. */
export const UPLOAD_FIELDS = PUNCH_ROW_FIELDS.filter((f): f is UploadField => PUNCH_ROW[f].uploadArray !== null);

/** {@link ClientField}s in table order: the columns a CSV upload must have. */
export const CLIENT_FIELDS = PUNCH_ROW_FIELDS.filter((f): f is ClientField => PUNCH_ROW[f].sentBy === 'client');

/** The fields the service assigns: columns a CSV upload may carry (a download's) and that are ignored. */
export const SERVICE_FIELDS = PUNCH_ROW_FIELDS.filter((f) => PUNCH_ROW[f].sentBy === 'service');

/** The row's columns in table order, comma-separated, each qualified with `alias` when given (`q.id, q.card, …`). */
export function punchColumns(alias?: string): string {
  return PUNCH_ROW_FIELDS.map((f) => (alias === undefined ? PUNCH_ROW[f].column : `${alias}.${PUNCH_ROW[f].column}`)).join(', ');
}

/**
 * The row's columns named as the API's fields, for `row_to_json`/`json_agg` (`id, …, reception_time_utc as
 * "receptionTimeUtc"`): a column whose name differs from its field gets a quoted alias.
 */
export const PUNCH_API_COLUMNS = PUNCH_ROW_FIELDS.map((f) => (PUNCH_ROW[f].column === f ? f : `${PUNCH_ROW[f].column} as "${f}"`)).join(', ');
