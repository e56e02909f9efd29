/**
 * ERP token store and client provider (`devGetErpApiToken`, `devSetErpApiToken`,
 * `devTestErpApi`) against the ERP simulator over real HTTP and a real PostgreSQL: the token is stored only
 * encrypted and bound to its ERP system (a swapped or truncated row is rejected, never used), shown masked,
 * used by the shared client at once after a set, and ERP failures (wrong token, down, slow) are reported
 * in the body within the configured deadline.
 */
import request from 'supertest';
import { DEFAULT_TOKENS, createErpSimulator, type ErpSimulator } from '@sports-timing/erp-simulator';
import { DecryptionError } from '../src/crypto/aead';
import { maskToken } from '../src/erp/erp-clients';
import { startOrdering, type OrderingTestContext } from './support/app';

let sim: ErpSimulator;
let ctx: OrderingTestContext;
let admin: string;
const BASE = '/api/rest/v1/dev';

beforeAll(async () => {
  sim = await createErpSimulator().start();
  ctx = await startOrdering({ ERP_BASE_URL_WECLAPP: sim.baseUrl('main'), ERP_BASE_URL_WECLAPP_SANDBOX: sim.baseUrl('sandbox'), ERP_TIMEOUT_MS: '400' });
  admin = await ctx.bearer({ roles: ['admin'] });
});
afterAll(async () => {
  await ctx.close();
  await sim.stop();
});
beforeEach(async () => {
  sim.reset();
  sim.server.clearFaults();
  sim.server.requests.length = 0;
  await ctx.database.db.deleteFrom('erp_api_tokens').execute();
  ctx.services.erpClients.invalidate();
});

const getToken = (erpSystem: string) => request(ctx.app).get(`${BASE}/get-erp-api-token`).query({ erpSystem }).set('authorization', admin);
const setToken = (erpSystem: string, token: string) =>
  request(ctx.app).post(`${BASE}/set-erp-api-token`).query({ erpSystem, token }).set('authorization', admin);
const testApi = (erpSystem: string, quotationEntityId?: string) =>
  request(ctx.app)
    .get(`${BASE}/test-erp-api`)
    .query({ erpSystem, ...(quotationEntityId ? { quotationEntityId } : {}) })
    .set('authorization', admin);

describe('set / get', () => {
  it('shows nothing stored, then the stored token masked with its key version, encrypted in the row', async () => {
    expect((await getToken('weclapp').expect(200)).body).toEqual({ erpSystem: 'weclapp', isSet: false, maskedToken: null, keyVersion: null, updatedAt: null });
    const before = Date.now();
    await setToken('weclapp', DEFAULT_TOKENS.main).expect(200);
    const after = Date.now();
    const info = (await getToken('weclapp').expect(200)).body;
    expect(info).toMatchObject({ erpSystem: 'weclapp', isSet: true, maskedToken: `***${DEFAULT_TOKENS.main.slice(-4)}`, keyVersion: 1 });
    // Stamped by the write itself (second precision at most is lost).
    expect(Date.parse(info.updatedAt)).toBeGreaterThanOrEqual(before - 1_000);
    expect(Date.parse(info.updatedAt)).toBeLessThanOrEqual(after + 1_000);
    expect((await getToken('weclappSandbox').expect(200)).body.isSet).toBe(false);
    const row = await ctx.database.db.selectFrom('erp_api_tokens').selectAll().executeTakeFirstOrThrow();
    expect(row.ciphertext).not.toContain('dev-erp-token');
    expect(Buffer.from(row.ciphertext, 'base64url').toString('latin1')).not.toContain('erp-token');
    expect(row.updated_by).toBe('user:1:test');
    expect(maskToken('short')).toBe('***');
  });

  it('never stores a token the ERP rejects; stores one while the ERP is down; the client uses a new one at once', async () => {
    const refused = await setToken('weclapp', 'wrong-token-0000').expect(400);
    expect(JSON.stringify(refused.body)).not.toContain('wrong-token-0000');
    expect((await getToken('weclapp').expect(200)).body.isSet).toBe(false);
    // Rotating during an ERP outage is possible: the token cannot be checked, it is stored.
    await sim.server.down('reset');
    await setToken('weclapp', 'rotated-during-outage-0001').expect(200);
    await sim.server.up();
    const bad = (await testApi('weclapp').expect(200)).body;
    expect(bad).toMatchObject({ erpSystem: 'weclapp', isReachable: false, httpStatus: 401, quotation: null });
    expect(JSON.stringify(bad)).not.toContain('rotated-during-outage');
    await setToken('weclapp', DEFAULT_TOKENS.main).expect(200);
    expect((await testApi('weclapp').expect(200)).body).toMatchObject({ isReachable: true, httpStatus: 200, baseUrl: sim.baseUrl('main') });
    expect(await ctx.services.erpClients.token('weclapp')).toEqual({ token: DEFAULT_TOKENS.main, source: 'stored' });
  });

  it('falls back to the configured token while none is stored', async () => {
    expect(await ctx.services.erpClients.token('weclappSandbox')).toEqual({ token: DEFAULT_TOKENS.sandbox, source: 'configured' });
    expect((await testApi('weclappSandbox').expect(200)).body).toMatchObject({ isReachable: true, baseUrl: sim.baseUrl('sandbox') });
  });

  it('rejects bad input and non-admins', async () => {
    await setToken('sap', 'x-token-123').expect(400);
    await request(ctx.app).post(`${BASE}/set-erp-api-token`).query({ erpSystem: 'weclapp' }).set('authorization', admin).expect(400);
    await setToken('weclapp', 'has space').expect(400);
    await request(ctx.app)
      .post(`${BASE}/set-erp-api-token`)
      .query({ erpSystem: 'weclapp', token: 'x-token-123' })
      .set('authorization', await ctx.bearer({ roles: ['support'] }))
      .expect(403);
    await request(ctx.app).get(`${BASE}/get-erp-api-token`).query({ erpSystem: 'weclapp' }).expect(401);
    expect(await ctx.database.db.selectFrom('erp_api_tokens').selectAll().execute()).toEqual([]);
  });
});

describe('tamper resistance', () => {
  it('a row swapped to another ERP system is rejected, not used', async () => {
    await setToken('weclapp', DEFAULT_TOKENS.main).expect(200);
    const row = await ctx.database.db.selectFrom('erp_api_tokens').selectAll().executeTakeFirstOrThrow();
    await ctx.database.db
      .insertInto('erp_api_tokens')
      .values({ ...row, erp_system: 'weclappSandbox' })
      .execute();
    ctx.services.erpClients.invalidate();
    await expect(ctx.services.erpClients.token('weclappSandbox')).rejects.toBeInstanceOf(DecryptionError);
    expect((await getToken('weclappSandbox').expect(200)).body).toMatchObject({ isSet: true, maskedToken: '***' });
    const res = (await testApi('weclappSandbox').expect(200)).body;
    expect(res).toMatchObject({ isReachable: false, httpStatus: null });
    expect(res.message).toMatch(/no usable API token/);
    // The simulator never saw a request of the sandbox tenant.
    expect(sim.server.requests.filter((r) => r.path.startsWith('/sandbox/'))).toEqual([]);
  });

  it('a truncated tag is rejected', async () => {
    await setToken('weclapp', DEFAULT_TOKENS.main).expect(200);
    const row = await ctx.database.db.selectFrom('erp_api_tokens').selectAll().executeTakeFirstOrThrow();
    const raw = Buffer.from(row.ciphertext, 'base64url');
    for (const cut of [1, 4, 12]) {
      await ctx.database.db
        .updateTable('erp_api_tokens')
        .set({ ciphertext: raw.subarray(0, raw.length - cut).toString('base64url') })
        .where('erp_system', '=', 'weclapp')
        .execute();
      ctx.services.erpClients.invalidate();
      await expect(ctx.services.erpClients.token('weclapp')).rejects.toBeInstanceOf(DecryptionError);
    }
    expect((await testApi('weclapp').expect(200)).body.isReachable).toBe(false);
  });
});

describe('test-erp-api', () => {
  it('reads a quotation by id, and reports an unknown id', async () => {
    const erp = ctx.services.erpClients.client;
    const customer = (await erp.listCustomers('weclapp'))[0];
    const { quotation } = await erp.createQuotation(
      'weclapp',
      { customerId: customer.id, quotationItems: [{ articleId: (await erp.findArticleByNumber('weclapp', 'SIAC1'))!.id, quantity: '1' }] },
      'test-erp-api-1',
    );
    const res = (await testApi('weclapp', quotation.id).expect(200)).body;
    expect(res).toMatchObject({ isReachable: true, httpStatus: 200, quotation: { id: quotation.id, quotationNumber: quotation.quotationNumber } });
    expect((await testApi('weclapp', '999999').expect(200)).body).toMatchObject({ isReachable: true, httpStatus: 404, quotation: null });
    await testApi('weclapp', 'bad id!').expect(400);
  });

  it('reports a simulator that is down, and one that is too slow, by its deadline', async () => {
    await sim.server.down('reset');
    expect((await testApi('weclapp').expect(200)).body).toMatchObject({ isReachable: false, httpStatus: null });
    await sim.server.up();
    // The answer is held for 3 s; the report names the 400 ms deadline that gave up on it.
    sim.server.delay({ ms: 3_000, count: 1 });
    const slow = (await testApi('weclapp').expect(200)).body;
    expect(slow).toMatchObject({ isReachable: false, httpStatus: null });
    expect(slow.message).toMatch(/no answer within 400 ms/);
  });
});
