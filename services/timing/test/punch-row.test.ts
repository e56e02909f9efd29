/**
 * The punch row (src/db/punch-row.ts) agrees with its two other statements of the punch fields: the spec's
 * `Punch` and `NewPunch` (specs/timing.yaml, the source of the field list and order), and the current text of
 * the upload function `upload_punches` (the newest `src/db/functions/upload_punches.v<N>.sql`, docs/database.md
 * "Function texts"), whose array parameters the upload call casts from the row. Each check has a negative control: the
 * same check on a changed spec or function text fails. The typed client's field list (the CLI's CSV columns),
 * which cannot read the service's row, is held to the spec's order here too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadSpec, type OpenApiDocument } from '@sports-timing/shared';
import { PUNCH_FIELDS as CLIENT_PACKAGE_FIELDS } from '@sports-timing/timing-client';
import { PUNCH_ROW, UPLOAD_FIELDS, punchColumns } from '../src/db/punch-row';
import { punchRowProblems } from '../src/punches/punch-spec';
import { SPEC_FILE } from '../src/version';

const FUNCTIONS_DIR = path.join(__dirname, '../src/db/functions');

/** The properties of component schema `name` of `doc`, for editing a copy. */
function properties(doc: OpenApiDocument, name: string): Record<string, unknown> {
  return (doc.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas[name].properties;
}

/** A copy of the spec with `edit` applied. */
function specWith(edit: (doc: OpenApiDocument) => void): OpenApiDocument {
  const doc = structuredClone(loadSpec(SPEC_FILE));
  edit(doc);
  return doc;
}

describe('the punch row and the spec', () => {
  test('agree: Punch fields in order, their JSON types, the NewPunch fields', () => {
    expect(punchRowProblems(loadSpec(SPEC_FILE))).toEqual([]);
  });

  test("the typed client's PUNCH_FIELDS (the CLI's CSV columns) are the spec's Punch fields in order", () => {
    expect(CLIENT_PACKAGE_FIELDS).toEqual(Object.keys(properties(loadSpec(SPEC_FILE), 'Punch')));
  });

  test('negative control: a Punch field the row lacks', () => {
    const doc = specWith((d) => (properties(d, 'Punch').battery = { type: 'integer' }));
    expect(punchRowProblems(doc)).toEqual([expect.stringContaining("the spec's Punch has id, card, time, code, type, modem, receptionTimeUtc, battery")]);
  });

  test('negative control: the Punch fields in another order', () => {
    const doc = specWith((d) => {
      const p = properties(d, 'Punch');
      const { card, ...rest } = p;
      (d.components as { schemas: Record<string, { properties: unknown }> }).schemas.Punch.properties = { ...rest, card };
    });
    expect(punchRowProblems(doc)).toEqual([expect.stringContaining("the spec's Punch has id, time")]);
  });

  test('negative control: a field of another JSON type', () => {
    const doc = specWith((d) => (properties(d, 'Punch').code = { type: 'string' }));
    expect(punchRowProblems(doc)).toEqual(['Punch.code is type string in the spec; the punch row says integer']);
  });

  test('negative control: a NewPunch field the row does not mark as sent by the client', () => {
    const doc = specWith((d) => (properties(d, 'NewPunch').receptionTimeUtc = { type: 'integer' }));
    expect(punchRowProblems(doc)).toEqual([expect.stringContaining("the spec's NewPunch has card, time, code, type, modem, receptionTimeUtc")]);
  });
});

/** PostgreSQL's names of the array types the row uses, as a function signature may spell them. */
const TYPE_ALIASES: Readonly<Record<string, string>> = { 'bigint[]': 'int8[]', 'integer[]': 'int4[]', 'text[]': 'text[]' };

/**
 * What is wrong with an `upload_punches` text against the row, one message each: its array parameters
 * (after `p_user_id integer, p_admin boolean, p_quota bigint`, up to the `out` parameters) must be the row's upload fields'
 * array types in order, and its insert must name the row's columns in order.
 */
function functionProblems(text: string): string[] {
  const problems: string[] = [];
  const signature = /create or replace function upload_punches\(\s*p_user_id integer, p_admin boolean, p_quota bigint,([\s\S]*?),\s*out /.exec(text);
  if (signature === null) return ['no signature `upload_punches(p_user_id integer, p_admin boolean, p_quota bigint, …, out …)`'];
  const types = signature[1].split(',').map((p) => {
    const type = p.trim().split(/\s+/)[1];
    return TYPE_ALIASES[type] ?? type;
  });
  const expected = UPLOAD_FIELDS.map((f) => PUNCH_ROW[f].uploadArray);
  if (types.join(', ') !== expected.join(', '))
    problems.push(`array parameters ${types.join(', ')}; the punch row's upload fields take ${expected.join(', ')}`);
  const insert = /insert into punches \(([^)]*)\)/.exec(text);
  if (insert?.[1] !== punchColumns()) problems.push(`inserts into ${insert?.[1] ?? '(no insert)'}; the punch row's columns are ${punchColumns()}`);
  return problems;
}

/** The current text of `upload_punches`: its version file with the highest N. */
function currentUploadFunction(): { file: string; text: string } {
  const versions = readdirSync(FUNCTIONS_DIR)
    .map((f) => /^upload_punches\.v(\d+)\.sql$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(b[1]) - Number(a[1]));
  const file = versions[0][0];
  return { file, text: readFileSync(path.join(FUNCTIONS_DIR, file), 'utf8') };
}

describe('the punch row and the upload function', () => {
  test("the current upload_punches takes the row's upload fields as its arrays and inserts the row's columns", () => {
    const { file, text } = currentUploadFunction();
    expect(file).toMatch(/^upload_punches\.v\d+\.sql$/);
    expect(functionProblems(text)).toEqual([]);
  });

  test('negative control: two array parameters swapped, a column missing from the insert', () => {
    const { text } = currentUploadFunction();
    const changed = text.replace('p_times bigint[], p_codes integer[]', 'p_codes integer[], p_times bigint[]').replace(', reception_time_utc)', ')');
    expect(changed).not.toBe(text);
    expect(functionProblems(changed)).toEqual([
      "array parameters text[], int4[], int8[], text[], text[], int8[]; the punch row's upload fields take text[], int8[], int4[], text[], text[], int8[]",
      expect.stringContaining('inserts into id, card, time, code, type, modem;'),
    ]);
  });
});
