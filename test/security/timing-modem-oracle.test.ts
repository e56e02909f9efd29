/**
 * OWASP API3 (excessive exposure) on uploads for another user's modem (spec `postPunches` "Modems",
 * `postRocPunches`): the 403 names neither the modem's user nor says that the serial "belongs" to someone — no
 * more than a read, which answers another user's private modem exactly as an unknown serial. Every upload way:
 * JSON on the fast lane, JSON on the pipeline (a browser request), CSV, and the ROC upload with the key in the
 * path; nothing is stored. Real HTTP on a listening app, real PostgreSQL.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localMs, punchCount, startTiming, upload, type TimingTestContext } from '../../services/timing/test/helpers';

jest.setTimeout(60_000);

let t: TimingTestContext;
let server: Server;
let base: string;
let intruderKey: string;
const SERIAL = 'a1b2c3d4e5f6';
const OWNER = 'realowner';

beforeAll(async () => {
  t = await startTiming();
  const owner = await t.createUser(OWNER);
  intruderKey = (await t.createUser('intruder')).key;
  await upload(t, owner.key, [{ card: '7', time: localMs(9), code: 31, type: 'Control', modem: SERIAL }]);
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await t?.close();
});

test.each([
  [
    'JSON (fast lane)',
    () => ({
      path: '/api/rest/v1/punches',
      type: 'application/json',
      extra: {},
      body: JSON.stringify([{ card: '8', time: localMs(10), code: 31, type: 'Control', modem: SERIAL }]),
    }),
  ],
  [
    'JSON (pipeline)',
    () => ({
      path: '/api/rest/v1/punches',
      type: 'application/json',
      extra: { Origin: 'https://results.example.org' },
      body: JSON.stringify([{ card: '8', time: localMs(10), code: 31, type: 'Control', modem: SERIAL }]),
    }),
  ],
  ['CSV', () => ({ path: '/api/rest/v1/punches', type: 'text/csv', extra: {}, body: `card,time,code,type,modem\n8,${localMs(10)},31,Control,${SERIAL}\n` })],
  [
    'ROC upload',
    () => ({
      path: `/roc/key/${intruderKey}/sendpunches_v2.php`,
      type: 'application/x-www-form-urlencoded',
      extra: {},
      body: `macaddr=${SERIAL}&control1=31&sinumber1=8&stationmode1=2&date1=2020-02-01&sitime1=10:00:00&ms1=0`,
    }),
  ],
])('%s for another user’s modem: 403 that names nobody and says nothing of ownership; nothing stored', async (_name, make) => {
  const before = await punchCount(t);
  const { path, type, extra, body } = make();
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { apikey: intruderKey, 'Content-Type': type, ...extra }, body });
  const text = await res.text();
  expect([res.status, text]).toEqual([403, expect.stringContaining(SERIAL)]);
  expect(text).not.toMatch(/belong|another user|owner|registered/i);
  expect(text).not.toContain(OWNER);
  expect(await punchCount(t)).toBe(before);
});
