/**
 * The punch API's limits, defaults and field list as specs/timing.yaml states them, so that none is written a
 * second time in the code (docs/architecture.md, "The spec is the single source"; test/spec-single-source.test.ts
 * holds it). A spec that no longer states one of them stops the service at start-up (shared spec-values.ts).
 *
 * Two kinds: the limits an app enforces ({@link PunchLimits}) come from that app's loaded spec (composition.ts
 * `composeTiming`), so an app over another spec enforces its limits; the shape of the page statements — the page
 * size and the punch fields, compiled into their SQL text (punches.repository.ts) — is read once when this module
 * loads, from the file the request validator reads by default ({@link SPEC_FILE}), and an app whose spec states
 * another shape is refused ({@link punchLimits}).
 *
 * The punch row (db/punch-row.ts) says, per field, what the spec cannot: its column, its upload array type and
 * who supplies it. It must list the spec's fields in the spec's order: this module refuses to load otherwise
 * ({@link punchRowProblems}).
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
import { CLIENT_FIELDS, PUNCH_ROW, PUNCH_ROW_FIELDS, type PunchField } from '../db/punch-row';
import type { ModemLimits } from '../modems/modem-spec';
import { SPEC_FILE } from '../version';

/** Punches per response: `getPunches` 200 `maxItems` (1000 in the spec). */
function pageSizeOf(doc: OpenApiDocument): number {
  return specNumber(responseSchemaOf(doc, 'getPunches'), 'maxItems', 'getPunches 200');
}

/** The fields of a punch in the order the spec's `Punch` lists them. */
function punchFieldsOf(doc: OpenApiDocument): string[] {
  return Object.keys(componentSchemaOf(doc, 'Punch').properties as Record<string, unknown>);
}

/** The JSON type (`string`, `integer`, …) of each property of component schema `name` of `doc`, refs resolved, in the spec's order. */
function propertyTypesOf(doc: OpenApiDocument, name: string): [string, unknown][] {
  const properties = (componentSchemaOf(doc, name).properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(properties).map(([field, schema]) => [field, resolveRef(doc, schema).type]);
}

/**
 * How the punch row (db/punch-row.ts) and the spec `doc` disagree, one message each; empty when they agree.
 * They agree when the row lists exactly the spec's `Punch` properties in the spec's order, each `text` field
 * is `type: string` there and each `integer` one `type: integer`, and the row's `client` fields are exactly
 * the `NewPunch` properties, in the same order.
 * @internal
 */
export function punchRowProblems(doc: OpenApiDocument): string[] {
  const problems: string[] = [];
  const punch = propertyTypesOf(doc, 'Punch');
  const specFields = punch.map(([f]) => f);
  if (specFields.join(',') !== PUNCH_ROW_FIELDS.join(','))
    problems.push(`the spec's Punch has ${specFields.join(', ')}; the punch row (db/punch-row.ts) has ${PUNCH_ROW_FIELDS.join(', ')}`);
  for (const [field, type] of punch) {
    if (!Object.hasOwn(PUNCH_ROW, field)) continue;
    const kind = PUNCH_ROW[field as PunchField].kind;
    if (type !== (kind === 'text' ? 'string' : 'integer')) problems.push(`Punch.${field} is type ${String(type)} in the spec; the punch row says ${kind}`);
  }
  const sent = propertyTypesOf(doc, 'NewPunch').map(([f]) => f);
  if (sent.join(',') !== CLIENT_FIELDS.join(','))
    problems.push(`the spec's NewPunch has ${sent.join(', ')}; the punch row's client fields are ${CLIENT_FIELDS.join(', ')}`);
  return problems;
}

const statementSpec: OpenApiDocument = loadSpec(SPEC_FILE);

const rowProblems = punchRowProblems(statementSpec);
if (rowProblems.length > 0) throw new Error(`${SPEC_FILE} and db/punch-row.ts disagree: ${rowProblems.join('; ')}`);

/** Punches per response of the page statements: `getPunches` 200 `maxItems` (1000 in the spec). */
export const PUNCH_PAGE_SIZE = pageSizeOf(statementSpec);

/**
 * The fields of a punch in the order the spec's `Punch` lists them: the columns of the CSV download, whose header
 * row is these names joined by commas (`getPunches`, text/csv).
 */
export const PUNCH_FIELDS: readonly string[] = punchFieldsOf(statementSpec);

/** For each of {@link PUNCH_FIELDS}, whether its JSON value is a string (`type: string`, refs resolved). */
export const PUNCH_FIELD_IS_TEXT: readonly boolean[] = PUNCH_FIELDS.map(
  (f) => resolveRef(statementSpec, (componentSchemaOf(statementSpec, 'Punch').properties as Record<string, Record<string, unknown>>)[f]).type === 'string',
);

/**
 * Largest card number: `NewPunch.card` `x-value-maximum` (16,777,215). SPORTident card numbers are 24-bit
 * values, and result software parses them into 32-bit integers (MeOS `std::stoi`, SIRAPimport `uint.Parse`):
 * a larger number would make those clients fail on every poll from that punch on.
 */
export function maxCardNumber(doc: OpenApiDocument): number {
  const properties = componentSchemaOf(doc, 'NewPunch').properties as Record<string, Record<string, unknown>>;
  return specNumber(properties.card, 'x-value-maximum', 'NewPunch.card');
}

/** The punch limits one app enforces, from its loaded spec. */
export interface PunchLimits {
  /** Most punches per upload: `postPunches` body `maxItems` (10,000; 400 beyond). */
  maxPunchesPerUpload: number;
  /** Most serial numbers in a `modem` filter: `getPunches` `modem` `x-max-list-items` (200; 400 beyond). */
  maxModemsPerQuery: number;
  /** {@link maxCardNumber}. */
  maxCardNumber: number;
}

/** Every limit of one app: its punch limits and modem caps (modems/modem-spec.ts). */
export type TimingLimits = PunchLimits & ModemLimits;

/**
 * The {@link PunchLimits} `doc` states. Throws when `doc` states another page size or other punch fields than
 * the page statements were built with (see the module comment): those are not per app.
 */
export function punchLimits(doc: OpenApiDocument): PunchLimits {
  if (pageSizeOf(doc) !== PUNCH_PAGE_SIZE)
    throw new Error(`the spec's getPunches page size must stay ${PUNCH_PAGE_SIZE}: the page statements are built with it`);
  if (punchFieldsOf(doc).join(',') !== PUNCH_FIELDS.join(','))
    throw new Error(`the spec's Punch fields must stay ${PUNCH_FIELDS.join(', ')}: the page statements are built with them`);
  return {
    maxPunchesPerUpload: specNumber(requestBodySchemaOf(doc, 'postPunches'), 'maxItems', 'postPunches body'),
    maxModemsPerQuery: specNumber(parameterSchemaOf(doc, 'getPunches', 'modem'), 'x-max-list-items', 'getPunches modem'),
    maxCardNumber: maxCardNumber(doc),
  };
}
