/**
 * What result software can do with an event's modem serials (timing README, "Real clients": which modem serials
 * each client accepts; docs/decisions.md §5, "Serials the clients cannot use"). Any `ModemSerial` is stored and
 * served; these are warnings in the event's answer (`Event.warnings`), never refusals: MeOS's event mode, the
 * Center clients and ROC readers read every serial, and only some clients drop some.
 */

/**
 * MeOS's modem mode keeps a typed unit id only when `_wtoi` gives a positive integer ("Invalid unit ID"
 * otherwise) and asks for that number, so a serial it can use is a positive int32 written without leading zeros.
 */
function meosReads(serial: string): boolean {
  return /^[1-9]\d{0,9}$/.test(serial) && Number(serial) <= 2_147_483_647;
}

/** Longest serial Pirilä reads (its modem field holds fewer than 24 characters). */
const PIRILA_MAX_SERIAL = 23;

/**
 * One line per client that cannot use one of `serials` (ascending, as the event lists them), naming the
 * serials and what still works; empty when every client reads them all.
 */
export function modemWarnings(serials: readonly string[]): string[] {
  const warnings: string[] = [];
  const notMeos = serials.filter((s) => !meosReads(s));
  if (notMeos.length > 0)
    warnings.push(
      `MeOS's modem mode reads only serials that are positive integers (without leading zeros) and drops ${notMeos.join(', ')} ("Invalid unit ID"); ` +
        'read this event in MeOS by its event id instead, or give the modems numeric serials.',
    );
  const tooLong = serials.filter((s) => s.length > PIRILA_MAX_SERIAL);
  if (tooLong.length > 0) warnings.push(`Pirilä reads serials of at most ${PIRILA_MAX_SERIAL} characters and cannot use ${tooLong.join(', ')}.`);
  return warnings;
}
