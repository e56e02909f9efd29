/**
 * The simple punch format of the SPORTident Center REST API (spec `SimplePunch`, operation
 * `getPublicEventPunches`): the same punches as `Punch`, named as the Center names them, so that clients
 * written for the Center (RadioSender maps its CSV by header names into `Id, Card, Time, Code, Mode`; web
 * live-result pages read `mode`, `receptionTime` and a numeric `card`) work unchanged.
 *
 * Rendered from a page in the service's own CSV (`id,card,time,code,type,modem,receptionTimeUtc`, built by
 * PostgreSQL): none of its fields can hold a comma, a quote or a line break (digits, the `PunchType` words
 * and `ModemSerial`, whose pattern excludes them), so a row splits on commas exactly.
 */
/** Header row of the simple format's CSV. */
const SIMPLE_CSV_HEADER = 'id,modem,card,time,code,mode,receptionTime';

/** `PunchType` → the Center's `mode` (spec `SimplePunch.mode`); a type added later passes through as it is. */
const MODES: Record<string, string> = {
  Control: 'BcControl',
  Start: 'BcStart',
  Finish: 'BcFinish',
  Check: 'BcCheck',
  Clear: 'BcClear',
  Unknown: 'Unknown',
};

/** The Center's `mode` of a punch type. */
function modeOfType(type: string): string {
  return MODES[type] ?? type;
}

/**
 * The first `limit` punches of a page in the service's CSV, in the simple format: a JSON array (text) or
 * CSV with {@link SIMPLE_CSV_HEADER}, every line ending in `\n`.
 */
export function simplePunchPage(csvPage: string, limit: number, format: 'json' | 'csv'): string {
  const rows = csvPage
    .split('\n')
    .slice(1, limit + 1)
    .filter((line) => line.length > 0);
  const out: string[] = [];
  for (const row of rows) {
    const [id, card, time, code, type, modem, receptionTimeUtc] = row.split(',');
    // Numbers as decimal text without leading zeros (cards are stored canonical; ids and times are integers).
    const mode = modeOfType(type);
    out.push(
      format === 'csv'
        ? `${id},${modem},${card},${time},${code},${mode},${receptionTimeUtc}\n`
        : `{"id":${id},"modem":${JSON.stringify(modem)},"card":${card},"time":${time},"code":${code},"mode":${JSON.stringify(mode)},"receptionTime":${receptionTimeUtc}}`,
    );
  }
  return format === 'csv' ? `${SIMPLE_CSV_HEADER}\n${out.join('')}` : `[${out.join(',')}]`;
}
