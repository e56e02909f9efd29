/**
 * JSON page bodies from the CSV text PostgreSQL renders. PostgreSQL builds a 1000-punch CSV page
 * in about half the time of the same page as JSON (`row_to_json` per row; bench/README.md, finding 14), and
 * turning that CSV into the JSON array here costs well under that: one pass over
 * the characters into a buffer of the exact size, ready for the socket. (Building a string instead cost
 * more than the pass itself when it was written: joining ~15,000 pieces, then measuring and encoding
 * the result as UTF-8.)
 *
 * Exact by construction or not at all: the CSV has no quoting, so the conversion is taken only when the
 * text cannot be misread and is plain ASCII — no `"`, `\`, control character (other than the line feeds
 * that end rows) or character beyond U+007F, every row exactly one value per `Punch` field, no empty field, and as many rows as
 * PostgreSQL counted — otherwise {@link jsonFromCsvPage} answers null and the caller reads the page as JSON
 * from PostgreSQL. Values written through the API always qualify (card digits, modem serial pattern, type
 * enum); the check guards rows written any other way.
 */
import { PUNCH_FIELD_IS_TEXT, PUNCH_FIELDS } from './punch-spec';

/** Fields of a row: the spec's `Punch` fields, in the order of the CSV columns (punch-spec.ts). */
const FIELDS = PUNCH_FIELDS.length;

/**
 * What precedes each field of a row (API field names, compact; a string field's value in quotes), e.g.
 * `{"id":`, `,"card":"`, `","time":`, and what ends the row (`}`, after a closing quote when the last field is
 * a string).
 */
const FIELD_PREFIX = PUNCH_FIELDS.map((name, f) =>
  Buffer.from(`${f === 0 ? '{' : PUNCH_FIELD_IS_TEXT[f - 1] ? '",' : ','}"${name}":${PUNCH_FIELD_IS_TEXT[f] ? '"' : ''}`, 'latin1'),
);
const ROW_END = Buffer.from(`${PUNCH_FIELD_IS_TEXT[FIELDS - 1] ? '"' : ''}}`, 'latin1');
const COMMA = 0x2c;
const LF = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** JSON bytes a row adds beyond its CSV field bytes: the prefixes and the row's end. */
const ROW_OVERHEAD = FIELD_PREFIX.reduce((n, p) => n + p.length, 0) + ROW_END.length;

/**
 * The JSON array (API field names, compact, UTF-8) of a CSV page body as `pageQuery` renders it (header row,
 * then `count` rows of the `Punch` fields, each ending in `\n`), or null when the
 * text does not qualify (see the module comment).
 */
export function jsonFromCsvPage(csv: string, count: number): Buffer | null {
  const n = csv.length;
  let i = csv.indexOf('\n') + 1;
  if (i === 0) return null;
  // Each row's commas and line feed (one per field) become the prefixes; '[', ']' and the commas between rows.
  const size = n - i - FIELDS * count + count * ROW_OVERHEAD + 2 + Math.max(0, count - 1);
  if (size < 2) return null;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  out[o++] = 0x5b; // [
  let rows = 0;
  while (i < n) {
    if (rows === count) return null;
    if (rows > 0) out[o++] = COMMA;
    for (let f = 0; f < FIELDS; f++) {
      const prefix = FIELD_PREFIX[f];
      if (o + prefix.length > size) return null;
      for (let k = 0; k < prefix.length; k++) out[o++] = prefix[k];
      const stop = f < FIELDS - 1 ? COMMA : LF;
      const start = i;
      for (;;) {
        if (i >= n) return null;
        const b = csv.charCodeAt(i);
        if (b === stop) break;
        // A line feed before the last field or a comma in it: not a whole row. Anything else needing escaping,
        // or beyond ASCII (one character, one byte).
        if (b < 0x20 || b > 0x7e || b === COMMA || b === QUOTE || b === BACKSLASH) return null;
        if (o >= size) return null;
        out[o++] = b;
        i++;
      }
      if (i === start) return null;
      i++;
    }
    if (o + ROW_END.length > size) return null;
    for (let k = 0; k < ROW_END.length; k++) out[o++] = ROW_END[k];
    rows++;
  }
  if (rows !== count || o !== size - 1) return null;
  out[o] = 0x5d; // ]
  return out;
}
