/**
 * Values of weclapp entities as the shop reads them (docs/weclapp.md): document dates in the tenant's time
 * zone, and custom attribute values by their definition.
 */
import type { ErpCustomAttribute, ErpCustomAttributeDefinition } from './erp.types';

/** Offset of `timeZone` from UTC at `utcMs`, ms. */
function zoneOffsetMs(timeZone: string, utcMs: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - Math.floor(utcMs / 1000) * 1000;
}

/** Epoch ms of local midnight starting day `day` of `month` (1–12) of `year` in `timeZone`. */
export function zonedMidnightMs(year: number, month: number, day: number, timeZone: string): number {
  const guess = Date.UTC(year, month - 1, day);
  const first = guess - zoneOffsetMs(timeZone, guess);
  return guess - zoneOffsetMs(timeZone, first);
}

/**
 * The value of the custom attribute `definition` on an entity: boolean (BOOLEAN), the selected value's
 * text (LIST), the string (STRING); null when the entity does not carry it.
 */
export function customAttributeValue(attributes: ErpCustomAttribute[] | undefined, definition: ErpCustomAttributeDefinition): boolean | string | null {
  const a = attributes?.find((x) => x.attributeDefinitionId === definition.id);
  if (!a) return null;
  if (definition.attributeType === 'BOOLEAN') return a.booleanValue ?? null;
  if (definition.attributeType === 'LIST') return definition.selectableValues?.find((v) => v.id === a.selectedValueId)?.value ?? null;
  return a.stringValue ?? null;
}
