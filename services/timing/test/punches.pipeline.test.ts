/**
 * The punch read and upload tests (punches.read.test.ts, punches.upload.test.ts) once more with the fast lane
 * off (`TIMING_FAST_LANE=off`): every plain `getPunches` (JSON and CSV) and `postPunches` request then takes
 * the Express pipeline, whose validator checks the answers against the spec (`validateResponses`; JSON punch
 * pages pass `res.json` there, see `sendText`), which it cannot do for the answers the fast lane sends. CSV
 * pages are a string to the spec: the tests' own assertions check their content. The cases are the same files' own, loaded after the
 * switch is set; punches.fast-lane.test.ts compares both paths answer by answer.
 */
import { loadTimingConfig } from '../src/config';
import { useFastLane } from './helpers';

useFastLane(false);
// Loaded after the switch (imports would run before it): their beforeAll hooks build the app without the lane.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- must run after useFastLane(false)
require('./punches.read.test');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
require('./punches.upload.test');

describe('TIMING_FAST_LANE', () => {
  it('is on by default, off with off, and refuses any other value at start', () => {
    expect(loadTimingConfig({}).fastLane).toBe(true);
    expect(loadTimingConfig({ TIMING_FAST_LANE: 'on' }).fastLane).toBe(true);
    expect(loadTimingConfig({ TIMING_FAST_LANE: 'off' }).fastLane).toBe(false);
    expect(() => loadTimingConfig({ TIMING_FAST_LANE: 'no' })).toThrow(/TIMING_FAST_LANE/);
  });
});
