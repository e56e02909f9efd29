/**
 * Secrets never leak (docs/decisions.md §7): requests carrying a password, access and refresh tokens, a
 * service-client identifier, API keys (header and query string), an ERP API token and an ERP webhook
 * secret; the exact production logger (`createLogger`, at debug level) writes into a buffer. No secret
 * may appear in any log line, in any error body, or in any response other than the one that issues it.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createLogger } from '@sports-timing/shared';
import { startOrdering, type OrderingTestContext } from '../../services/ordering/test/support/app';
import { bootstrapAdmin } from '../../services/ordering/src/identity/bootstrap';
import { createApp as createTimingApp } from '../../services/timing/src/app';
import { startTiming, type TimingTestContext } from '../../services/timing/test/helpers';
import { testNote } from '@sports-timing/shared/src/testing';

function capture(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { lines, sink };
}

const ADMIN_PASSWORD = `Adm1n-${randomBytes(8).toString('hex')}`;
const secret = (label: string) => `${label}${randomBytes(12).toString('hex')}`;

let ordering: OrderingTestContext;
let timing: TimingTestContext;
const oLog = capture();
const tLog = capture();
/** Every response body and header block seen, with whether it is the one allowed to carry a given secret. */
const seen: { what: string; text: string; issues?: string }[] = [];

function record(what: string, res: request.Response, issues?: string): request.Response {
  seen.push({ what, text: `${JSON.stringify(res.headers)}\n${res.text ?? ''}`, issues });
  return res;
}

beforeAll(async () => {
  ordering = await startOrdering(
    {
      BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
      LICENSE_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      LICENSE_SECRET_KEY: randomBytes(32).toString('base64url'),
      ENCRYPTION_KEYS: `1:${randomBytes(32).toString('base64')}`,
    },
    { logger: createLogger('ordering', 'debug', oLog.sink) },
  );
  await bootstrapAdmin({ database: ordering.database, config: ordering.deps.config, logger: ordering.deps.logger });
  timing = await startTiming();
});
afterAll(async () => {
  await ordering?.close();
  await timing?.close();
});

test('ordering: password, tokens, client id, ERP token and webhook secret stay out of logs and other responses', async () => {
  const app = ordering.app;
  const wrongPassword = secret('WrongPw');
  const clientIdSecret = secret('ClientId');
  const erpToken = secret('ErpToken');
  const webhookSecret = secret('HookSecret');
  const queryToken = secret('QueryToken');

  record(
    'failed login',
    await request(app).post('/api/rest/v1/auth/token').type('form').send({ grant_type: 'password', username: 'admin', password: wrongPassword }),
  );
  const login = record(
    'login',
    await request(app).post('/api/rest/v1/auth/token').type('form').send({ grant_type: 'password', username: 'admin', password: ADMIN_PASSWORD }),
    'tokens',
  );
  expect(login.status).toBe(200);
  const { access_token: access, refresh_token: refresh } = login.body as { access_token: string; refresh_token: string };
  const bearer = `Bearer ${access}`;
  record('refresh', await request(app).post('/api/rest/v1/auth/token').type('form').send({ grant_type: 'refresh_token', refresh_token: refresh }), 'tokens');
  record(
    'reuse of a rotated refresh token',
    await request(app).post('/api/rest/v1/auth/token').type('form').send({ grant_type: 'refresh_token', refresh_token: refresh }),
  );
  record('authorized read', await request(app).get('/api/rest/v1/version').set('Authorization', bearer));
  record(
    'battery lookup with client id',
    await request(app).get('/api/rest/v1/products/si-cards/8000001').set('X-Service-Client-Id', clientIdSecret).set('X-Sportident-Client-Id', clientIdSecret),
  );
  record(
    'token in a query string (unknown parameter → 400)',
    await request(app).get(`/api/rest/v1/version?access_token=${queryToken}&token=${queryToken}`).set('Authorization', bearer),
  );
  record('bad bearer', await request(app).get('/api/rest/v1/users').set('Authorization', `Bearer ${queryToken}`));
  record('set ERP token', await request(app).post(`/api/rest/v1/dev/set-erp-api-token?erpSystem=weclapp&token=${erpToken}`).set('Authorization', bearer));
  record('get ERP token', await request(app).get('/api/rest/v1/dev/get-erp-api-token?erpSystem=weclapp').set('Authorization', bearer));
  record(
    'forged webhook',
    await request(app)
      .post(`/api/rest/v1/erp/webhook?erpSystem=weclapp&secret=${webhookSecret}`)
      .send({ entityName: 'salesOrder', entityId: '1', type: 'update' }),
  );
  record(
    'malformed JSON with a password inside',
    await request(app).post('/api/rest/v1/users').set('Authorization', bearer).set('Content-Type', 'application/json').send(`{"password":"${wrongPassword}",`),
  );

  const logs = oLog.lines.join('');
  expect(oLog.lines.length).toBeGreaterThan(10);
  const secrets: Record<string, string> = { wrongPassword, ADMIN_PASSWORD, access, refresh, clientIdSecret, erpToken, webhookSecret, queryToken };
  const leaks: string[] = [];
  for (const [name, value] of Object.entries(secrets)) {
    if (logs.includes(value)) leaks.push(`${name} in logs`);
    for (const s of seen)
      if (s.text.includes(value) && !(s.issues === 'tokens' && (name === 'access' || name === 'refresh'))) leaks.push(`${name} in response of "${s.what}"`);
  }
  testNote(`ordering secrets: ${oLog.lines.length} log lines, ${seen.length} responses checked; leaks: ${leaks.length}`);
  expect(leaks).toEqual([]);
});

test('timing: API keys (header and query string) stay out of logs and responses', async () => {
  const log = tLog;
  const app = createTimingApp({ database: timing.database, logger: createLogger('timing', 'debug', log.sink), validateResponses: true });
  const unknownKey = secret('UnknownKey');
  const adminKey = timing.adminKey;
  record('read with key', await request(app).get('/api/rest/v1/punches?modem=1').set('apikey', adminKey));
  record('unknown key', await request(app).get('/api/rest/v1/punches?modem=1').set('apikey', unknownKey));
  record('key in query string', await request(app).get(`/api/rest/v1/punches?modem=1&apikey=${unknownKey}&key=${adminKey}`));
  record(
    'upload with key',
    await request(app)
      .post('/api/rest/v1/punches')
      .set('apikey', adminKey)
      .send([{ card: '1', time: 1, code: 31, type: 'Control', modem: 'm1' }]),
  );
  record('list keys', await request(app).get('/api/rest/v1/users/1/keys').set('apikey', adminKey));
  const logs = log.lines.join('');
  expect(log.lines.length).toBeGreaterThan(3);
  const leaks: string[] = [];
  for (const [name, value] of Object.entries({ adminKey, unknownKey })) {
    if (logs.includes(value)) leaks.push(`${name} in logs`);
    for (const s of seen) if (s.text.includes(value)) leaks.push(`${name} in response of "${s.what}"`);
  }
  testNote(`timing secrets: ${log.lines.length} log lines; leaks: ${leaks.length}`);
  expect(leaks).toEqual([]);
});
