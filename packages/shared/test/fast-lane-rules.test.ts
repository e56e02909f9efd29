/**
 * The fast lanes' rules compiled from spec schemas (fast-lane.ts `compileTextCheck`, `compileJsonCheck`):
 * a value is plain only where the request validator accepts it, and a keyword the lanes cannot check stops
 * the compilation instead of being ignored.
 */
import { compileJsonCheck, compileTextCheck, type OpenApiDocument } from '../src';

const spec: OpenApiDocument = {
  paths: {},
  components: {
    schemas: {
      Kind: { type: 'string', enum: ['a', 'b'], description: 'annotations are fine' },
      Item: {
        type: 'object',
        required: ['kind', 'n'],
        additionalProperties: false,
        properties: { kind: { $ref: '#/components/schemas/Kind' }, n: { type: 'integer', format: 'int32' }, note: { type: 'string' } },
      },
    },
  },
};

test('numbers: plain shape, bounds (3.0 boolean and 3.1 numeric exclusive bounds), int32', () => {
  const count = compileTextCheck(spec, { type: 'integer', minimum: 0, maximum: 60 }, 'count');
  expect(['0', '60', '7'].map(count)).toEqual([true, true, true]);
  expect(['-1', '61', '1.0', '1e1', ' 1', '', '0x1'].map(count)).toEqual([false, false, false, false, false, false, false]);
  const above30 = compileTextCheck(spec, { type: 'number', minimum: 0, exclusiveMinimum: true }, 'above30');
  expect([above30('0'), above30('0.5')]).toEqual([false, true]);
  const above31 = compileTextCheck(spec, { type: 'number', exclusiveMinimum: 0 }, 'above31');
  expect([above31('0'), above31('0.000001')]).toEqual([false, true]);
  const int32 = compileTextCheck(spec, { type: 'integer', format: 'int32' }, 'int32');
  expect([int32('2147483647'), int32('2147483648'), int32('-2147483648')]).toEqual([true, false, true]);
  // Past 15 digits a decimal is no longer exact as a JavaScript number: the pipeline's case.
  expect(compileTextCheck(spec, { type: 'integer', format: 'int64', minimum: 0 }, 'id')('1000000000000000')).toBe(false);
});

test('strings: pattern, lengths in code points, enum through $ref; booleans as true/false', () => {
  const code = compileTextCheck(spec, { type: 'string', pattern: '^[a-z]+$', minLength: 2, maxLength: 3 }, 'code');
  expect(['ab', 'abc', 'a', 'abcd', 'aB'].map(code)).toEqual([true, true, false, false, false]);
  // Two code points in four UTF-16 units: long enough for minLength 2, as the validator counts.
  expect(compileTextCheck(spec, { type: 'string', minLength: 2 }, 'emoji')('😀😀')).toBe(true);
  expect(compileTextCheck(spec, { type: 'string', minLength: 2 }, 'emoji')('😀')).toBe(false);
  const kind = compileTextCheck(spec, { $ref: '#/components/schemas/Kind' }, 'kind');
  expect(['a', 'b', 'c'].map(kind)).toEqual([true, true, false]);
  const flag = compileTextCheck(spec, { type: 'boolean' }, 'flag');
  expect(['true', 'false', 'TRUE', '1', ''].map(flag)).toEqual([true, true, false, false, false]);
});

test('JSON: closed objects, required properties, no type coercion, array lengths', () => {
  const items = compileJsonCheck(spec, { type: 'array', maxItems: 2, items: { $ref: '#/components/schemas/Item' } }, 'items');
  expect(
    items([
      { kind: 'a', n: 1 },
      { kind: 'b', n: 2, note: 'x' },
    ]),
  ).toBe(true);
  expect(items([])).toBe(true);
  expect(
    items([
      { kind: 'a', n: 1 },
      { kind: 'a', n: 1 },
      { kind: 'a', n: 1 },
    ]),
  ).toBe(false);
  expect(items([{ kind: 'a' }])).toBe(false);
  expect(items([{ kind: 'a', n: 1, extra: true }])).toBe(false);
  expect(items([{ kind: 'a', n: '1' }])).toBe(false);
  expect(items([{ kind: 'a', n: 1.5 }])).toBe(false);
  expect(items([{ kind: 'a', n: 2 ** 31 }])).toBe(false);
  expect(items([null])).toBe(false);
  expect(items({ 0: { kind: 'a', n: 1 } })).toBe(false);
});

test('a keyword the lanes cannot check stops the compilation', () => {
  expect(() => compileTextCheck(spec, { type: 'string', format: 'date-time' }, 'when')).toThrow(/when uses `format: date-time`/);
  expect(() => compileTextCheck(spec, { type: 'integer', multipleOf: 5 }, 'step')).toThrow(/multipleOf/);
  expect(() => compileTextCheck(spec, { type: 'string', nullable: true }, 'maybe')).toThrow(/nullable/);
  expect(() => compileJsonCheck(spec, { type: 'object', properties: {} }, 'open')).toThrow(/open object/);
  expect(() => compileJsonCheck(spec, { oneOf: [{ nullable: true }] }, 'either')).toThrow(/type/);
  expect(() => compileJsonCheck(spec, { type: 'string', oneOf: [{ type: 'string' }] }, 'both')).toThrow(/type beside oneOf/);
});

test('text formats (single-line, text) as the validator registers them; a sign only where negatives are allowed', () => {
  const name = compileTextCheck(spec, { type: 'string', format: 'single-line', maxLength: 20 }, 'name');
  expect(['Erika', 'Zoë 😀', 'a\u0000b', 'a\nb', 'a\rb', 'a\tb', 'a\u202Eb', 'a\u2066b', '\uD800', 'a\u0085b'].map(name)).toEqual([
    true,
    true,
    false,
    false,
    false,
    false,
    false,
    false,
    false,
    false,
  ]);
  const notes = compileJsonCheck(spec, { type: 'string', format: 'text' }, 'notes');
  expect(['line 1\nline 2\r\n\tx', 'a\u0000b', 'a\u202Eb', '\uDC00', 1].map(notes)).toEqual([true, false, false, false, false]);
  const unsigned = compileTextCheck(spec, { type: 'integer', minimum: 0 }, 'afterId');
  expect(['0', '-0', '-1', '5'].map(unsigned)).toEqual([true, false, false, true]);
  const signed = compileTextCheck(spec, { type: 'integer', format: 'int32' }, 'serviceId');
  expect(['-0', '-5'].map(signed)).toEqual([true, true]);
});

test('oneOf: exactly one form as JSON, any form as text', () => {
  const card = {
    oneOf: [
      { type: 'string', pattern: '^[0-9]{1,10}$' },
      { type: 'integer', minimum: 0, maximum: 9999999999 },
    ],
  };
  const json = compileJsonCheck(spec, card, 'card');
  expect(['9790916', 9790916, true, null, 9790916.5, '97x', -1].map(json)).toEqual([true, true, false, false, false, false, false]);
  const text = compileTextCheck(spec, card, 'card');
  expect(['9790916', 'x'].map(text)).toEqual([true, false]);
});
