/**
 * The punch API's limits, defaults and field list as specs/timing.yaml states them, read once when the module
 * loads from the file the request validator reads ({@link SPEC_FILE}), so that none is written a second time in
 * the code (docs/architecture.md, "The spec is the single source"; test/spec-single-source.test.ts holds it).
 * A spec that no longer states one of them stops the service at start-up (shared spec-values.ts).
 */
import {
  componentSchemaOf,
  loadSpec,
  parameterSchemaOf,
  requestBodySchemaOf,
  resolveRef,
  responseSchemaOf,
  specNumber,
  type OpenApiDocument,
} from '@sports-timing/shared';
import { SPEC_FILE } from '../version';

const spec: OpenApiDocument = loadSpec(SPEC_FILE);

/** Punches per response: `getPunches` 200 `maxItems` (1000 in the spec). */
export const PUNCH_PAGE_SIZE = specNumber(responseSchemaOf(spec, 'getPunches'), 'maxItems', 'getPunches 200');

/** Most punches per upload: `postPunches` body `maxItems` (10,000; 400 beyond). */
export const MAX_PUNCHES_PER_UPLOAD = specNumber(requestBodySchemaOf(spec, 'postPunches'), 'maxItems', 'postPunches body');

/** Most serial numbers in a `modem` filter: `getPunches` `modem` `x-max-list-items` (200; 400 beyond). */
export const MAX_MODEMS_PER_QUERY = specNumber(parameterSchemaOf(spec, 'getPunches', 'modem'), 'x-max-list-items', 'getPunches modem');

/**
 * Largest card number: `NewPunch.card` `x-value-maximum` (16,777,215). SPORTident card numbers are 24-bit
 * values, and result software parses them into 32-bit integers (MeOS `std::stoi`, SIRAPimport `uint.Parse`):
 * a larger number would make those clients fail on every poll from that punch on.
 */
export function maxCardNumber(doc: OpenApiDocument = spec): number {
  const properties = componentSchemaOf(doc, 'NewPunch').properties as Record<string, Record<string, unknown>>;
  return specNumber(properties.card, 'x-value-maximum', 'NewPunch.card');
}

/** {@link maxCardNumber} of the loaded spec. */
export const MAX_CARD_NUMBER = maxCardNumber();

/**
 * The fields of a punch in the order the spec's `Punch` lists them: the columns of the CSV download, whose header
 * row is these names joined by commas (`getPunches`, text/csv).
 */
export const PUNCH_FIELDS: readonly string[] = Object.keys(componentSchemaOf(spec, 'Punch').properties as Record<string, unknown>);

/** For each of {@link PUNCH_FIELDS}, whether its JSON value is a string (`type: string`, refs resolved). */
export const PUNCH_FIELD_IS_TEXT: readonly boolean[] = PUNCH_FIELDS.map(
  (f) => resolveRef(spec, (componentSchemaOf(spec, 'Punch').properties as Record<string, Record<string, unknown>>)[f]).type === 'string',
);
