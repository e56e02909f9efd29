/**
 * The fast lane's rules (src/http/punches.fast-lane.ts `compilePunchLaneRules`) without a server: which reads
 * and uploads they take as plain, and that they follow the spec they are compiled from. Whether the lane then
 * answers as the pipeline does is punches.fast-lane.test.ts.
 */
import { loadSpec, resolveRef } from '@sports-timing/shared';
import { compilePunchLaneRules } from '../src/http/punches.fast-lane';
import { SPEC_FILE } from '../src/version';

/** The lane's rules as the app compiles them from the spec it loads. */
const { plainPunchQuery, isPlainUpload } = compilePunchLaneRules(loadSpec(SPEC_FILE));

describe('plainPunchQuery', () => {
  it('takes only the plain, valid case', () => {
    expect(plainPunchQuery('eventId=7&afterId=12&after=1580584563000.0')).toEqual({ eventId: '7', afterId: 12, after: 1580584563000 });
    expect(plainPunchQuery('modem=A%2CB,C')).toEqual({ modem: 'A,B,C' });
    expect(plainPunchQuery('afterId=1')).toBeNull();
    expect(plainPunchQuery('eventId=1&wait=5')).toBeNull();
    expect(plainPunchQuery('eventId=1&eventId=2')).toBeNull();
    expect(plainPunchQuery('modem=%zz')).toBeNull();
    expect(plainPunchQuery(`modem=${'M'.repeat(13_001)}`)).toBeNull();
    expect(plainPunchQuery('user=-bad')).toBeNull();
  });
});

describe('isPlainUpload', () => {
  it('takes only batches of plainly valid punches', () => {
    const p = { card: '1', time: 0, code: 65535, type: 'Clear', modem: 'M:1' };
    expect(isPlainUpload([p, { ...p, time: 253402300799999 }])).toBe(true);
    expect(isPlainUpload([])).toBe(false);
    // A JSON integer is the card's second form in the spec (oneOf); other JSON types are the pipeline's 400.
    expect(isPlainUpload([{ ...p, card: 1 }])).toBe(true);
    expect(isPlainUpload([{ ...p, card: true }])).toBe(false);
    expect(isPlainUpload([{ ...p, card: null }])).toBe(false);
    expect(isPlainUpload([{ ...p, card: 1.5 }])).toBe(false);
    expect(isPlainUpload([{ ...p, card: '12345678901' }])).toBe(false);
    expect(isPlainUpload([{ ...p, time: 1.5 }])).toBe(false);
    expect(isPlainUpload([{ ...p, time: 253402300800000 }])).toBe(false);
    expect(isPlainUpload([{ ...p, code: 65536 }])).toBe(false);
    expect(isPlainUpload([{ ...p, type: 'Lap' }])).toBe(false);
    expect(isPlainUpload([{ ...p, modem: 'a,b' }])).toBe(false);
    expect(isPlainUpload([{ card: '1', time: 0, code: 1, type: 'Clear', extra: 'M' }])).toBe(false);
    expect(isPlainUpload([null])).toBe(false);
    expect(isPlainUpload({ 0: p })).toBe(false);
  });
});

describe('rules from the spec', () => {
  it('follow the spec they are compiled from: parameter patterns, PunchType values, limits', () => {
    const spec = loadSpec(SPEC_FILE);
    const schemas = (spec.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
    const read = spec.paths['/api/rest/v1/punches'].get as { parameters: { name?: string; schema?: Record<string, unknown> }[] };
    resolveRef(spec, read.parameters.find((p) => p.name === 'user')!.schema!).pattern = '^[a-z]{1,8}$';
    read.parameters = read.parameters.filter((p) => p.name !== 'after');
    (schemas.PunchType.enum as string[]).push('Lap');
    (schemas.NewPunch.properties as Record<string, Record<string, unknown>>).code.maximum = 999;
    const rules = compilePunchLaneRules(spec);
    expect(rules.plainPunchQuery('user=org')).toEqual({ user: 'org' });
    expect(rules.plainPunchQuery('user=Org1')).toBeNull();
    expect(rules.plainPunchQuery('eventId=7&after=1')).toBeNull();
    const p = { card: '1', time: 0, code: 999, type: 'Lap', modem: 'M:1' };
    expect(rules.isPlainUpload([p])).toBe(true);
    expect(rules.isPlainUpload([{ ...p, code: 1000 }])).toBe(false);
    // A keyword the lane cannot check stops the app from being built rather than letting the lane guess.
    schemas.ModemSerial.format = 'hostname';
    expect(() => compilePunchLaneRules(spec)).toThrow(/format/);
  });
});
