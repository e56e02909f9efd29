/**
 * The access matrix, built from the spec: every operation of `specs/ordering.yaml` declares
 * `security` and `x-roles`, and is called as anonymous, customer, retailer, support and admin (real users,
 * real tokens from the token endpoint) with a minimal request. Anonymous callers of secured operations get
 * 401, roles outside `x-roles` get 403, allowed roles pass access control (any other status, including 501
 * for operations not implemented yet). Then ownership: one customer never reads or changes another's
 * user record or licenses (404). Finally the end-to-end flow of the "done when".
 */
import type { Express } from 'express';
import request from 'supertest';
import { loadSpec } from '@sports-timing/shared';
import { SPEC_FILE } from '../src/version';
import { ADMIN_PASSWORD, bearerOf, createUser, login, startIdentity, verifyOwnEmail, type IdentityTestContext, type User } from './support/identity';
import { verifyLicenseKey } from './support/license-keys';

type Schema = { $ref?: string; type?: string; enum?: unknown[]; minimum?: number; format?: string; default?: unknown };
type Parameter = { $ref?: string; name: string; in: string; required?: boolean; schema?: Schema };
type Operation = {
  operationId: string;
  security?: Record<string, string[]>[];
  'x-roles'?: string[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, unknown> };
};

const spec = loadSpec(SPEC_FILE) as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { parameters: Record<string, Parameter>; schemas: Record<string, Schema> };
};
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function deref<T extends { $ref?: string }>(x: T): T {
  if (!x.$ref) return x;
  const [, , section, name] = x.$ref.split('/');
  return deref((spec.components as unknown as Record<string, Record<string, T>>)[section][name]);
}

/** A plausible value for a path parameter (its enum's first value, its minimum, or a number/word). */
function sampleValue(schema: Schema | undefined): string {
  const s = schema ? deref(schema) : { type: 'string' };
  if (s.enum?.length) return String(s.enum[0]);
  if (s.type === 'integer' || s.type === 'number') return String(s.minimum ?? 1);
  if (s.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
  return 'sample';
}

interface Op {
  method: (typeof METHODS)[number];
  path: string;
  url: string;
  id: string;
  roles: string[];
  security: Record<string, string[]>[] | undefined;
  hasBody: boolean;
}

const operations: Op[] = Object.entries(spec.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((method) => {
    const op = item[method];
    const params = (op.parameters ?? []).map(deref);
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent(sampleValue(params.find((p) => p.in === 'path' && p.name === name)?.schema)),
    );
    return { method, path, url, id: op.operationId, roles: op['x-roles'] ?? [], security: op.security, hasBody: !!op.requestBody };
  }),
);

/** Whether the operation is authenticated by a scheme of its own (the ERP webhook's URL secret), not by tokens. */
const ownScheme = (op: Op) => !!op.security?.length && op.security.every((req) => Object.keys(req).length > 0 && !('bearerAuth' in req));
const isAnonymous = (op: Op) => op.roles.includes('anonymous');
const allows = (op: Op, role: string) => isAnonymous(op) || op.roles.includes('authenticated') || op.roles.includes(role);

const ROLE_NAMES = ['customer', 'retailer', 'support', 'admin'] as const;
type RoleName = (typeof ROLE_NAMES)[number];

async function call(app: Express, op: Op, bearer?: string): Promise<number> {
  let r = request(app)[op.method](op.url).timeout(8_000);
  if (bearer) r = r.set('authorization', bearer);
  if (op.hasBody) r = r.set('content-type', 'application/json').send('{}');
  try {
    return (await r).status;
  } catch (err) {
    // A handler that hangs past the timeout has passed access control (it runs first): record it as such.
    if ((err as { timeout?: number }).timeout) return 0;
    throw err;
  }
}

/** Runs `fn` over `items` with at most `size` calls in flight (a slow operation does not hold up a batch). */
async function inBatches<T>(items: T[], size: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: size }, worker));
}

let ctx: IdentityTestContext;
const bearers = {} as Record<RoleName, string>;
const users = {} as Record<'customer' | 'other' | 'retailer' | 'support', User>;
const PW = 'matrix-password-123';

beforeAll(async () => {
  ctx = await startIdentity();
  bearers.admin = await bearerOf(ctx.app, 'admin', ADMIN_PASSWORD);
  [users.customer, users.other, users.retailer, users.support] = await Promise.all([
    createUser(ctx.app, bearers.admin, { userName: 'cust', email: 'cust@example.com', password: PW }),
    createUser(ctx.app, bearers.admin, { userName: 'other', email: 'other@example.com', password: PW }),
    createUser(ctx.app, bearers.admin, { userName: 'shop', email: 'shop@example.com', password: PW, roles: ['retailer'], erpRetailerEntityId: 'C-42' }),
    createUser(ctx.app, bearers.admin, { userName: 'staff', email: 'staff@example.com', password: PW, roles: ['support'] }),
  ]);
  [bearers.customer, bearers.retailer, bearers.support] = await Promise.all([
    bearerOf(ctx.app, 'cust', PW),
    bearerOf(ctx.app, 'shop', PW),
    bearerOf(ctx.app, 'staff', PW),
  ]);
  // Licenses follow verified addresses only.
  await Promise.all([verifyOwnEmail(ctx, bearers.customer), verifyOwnEmail(ctx, bearers.retailer)]);
});
afterAll(async () => ctx.close());

describe('the spec declares access for every operation', () => {
  it.each(operations.map((o) => [o.id, o] as const))('%s has security and x-roles that agree', (_id, op) => {
    expect(op.security).toBeDefined();
    expect(op.roles.length).toBeGreaterThan(0);
    for (const r of op.roles) expect(['anonymous', 'authenticated', ...ROLE_NAMES]).toContain(r);
    const optional = op.security!.length === 0 || op.security!.some((req) => Object.keys(req).length === 0);
    if (isAnonymous(op)) expect(optional || ownScheme(op)).toBe(true);
    else {
      expect(optional).toBe(false);
      expect(op.security!.some((req) => 'bearerAuth' in req)).toBe(true);
    }
  });
});

describe('access matrix', () => {
  it(`covers ${operations.length} operations`, () => {
    expect(operations.length).toBeGreaterThan(70);
  });

  it('anonymous: 401 with a Bearer challenge on every secured operation', async () => {
    const failures: string[] = [];
    await inBatches(
      operations.filter((o) => !isAnonymous(o)),
      8,
      async (op) => {
        const res = await request(ctx.app)
          [op.method](op.url)
          .set('content-type', 'application/json')
          .send(op.hasBody ? '{}' : undefined);
        if (res.status !== 401 || !/^Bearer/.test(String(res.headers['www-authenticate']))) failures.push(`${op.id}: ${res.status}`);
      },
    );
    expect(failures).toEqual([]);
  });

  it('every role outside x-roles: 403', async () => {
    const failures: string[] = [];
    const cases = operations.flatMap((op) => ROLE_NAMES.filter((role) => !allows(op, role)).map((role) => ({ op, role })));
    expect(cases.length).toBeGreaterThan(100);
    await inBatches(cases, 8, async ({ op, role }) => {
      const status = await call(ctx.app, op, bearers[role]);
      if (status !== 403) failures.push(`${op.id} as ${role}: ${status}`);
    });
    expect(failures).toEqual([]);
  });

  it('every allowed role (and anonymous where allowed) passes access control', async () => {
    const failures: string[] = [];
    // Maintenance mode would answer 503 to later shop calls; it changes nothing about access, but run it last.
    const ordered = [...operations.filter((o) => !ownScheme(o))].sort(
      (a, b) => Number(a.id === 'enableMaintenanceMode') - Number(b.id === 'enableMaintenanceMode'),
    );
    const cases = ordered.flatMap((op) => [
      ...(isAnonymous(op) ? [{ op, role: 'anonymous' as const }] : []),
      ...ROLE_NAMES.filter((role) => allows(op, role)).map((role) => ({ op, role })),
    ]);
    await inBatches(cases, 8, async ({ op, role }) => {
      const status = await call(ctx.app, op, role === 'anonymous' ? undefined : bearers[role]);
      if (status === 401 || status === 403) failures.push(`${op.id} as ${role}: ${status}`);
    });
    expect(failures).toEqual([]);
    await request(ctx.app).post('/api/rest/v1/maintenance/disable-maintenance-mode').set('authorization', bearers.admin);
  });
});

describe("ownership: another customer's objects are 404", () => {
  beforeAll(async () => {
    await request(ctx.app)
      .post('/api/rest/v1/licensing/create-licenses')
      .query({ product: 'sportidentConfigPlus', numberOfLicenses: 2 })
      .set('authorization', bearers.admin)
      .expect(200);
    await request(ctx.app)
      .post('/api/rest/v1/licensing/assign-license')
      .set('authorization', bearers.support)
      .send({ product: 'sportidentConfigPlus', email: 'other@example.com' })
      .expect(200);
  });

  it.each(['customer', 'retailer'] as const)('a %s cannot read another user by id or by name', async (role) => {
    await request(ctx.app).get(`/api/rest/v1/users/${users.other.id}`).set('authorization', bearers[role]).expect(404);
    await request(ctx.app).get('/api/rest/v1/users/get-by-name').query({ userName: 'other' }).set('authorization', bearers[role]).expect(404);
  });

  it('a customer cannot change another user: no id in update-profile, update-roles is admin-only', async () => {
    await request(ctx.app)
      .post('/api/rest/v1/users/update-profile')
      .set('authorization', bearers.customer)
      .send({ id: users.other.id, firstName: 'Hacked' })
      .expect(400);
    await request(ctx.app)
      .post('/api/rest/v1/users/update-roles')
      .set('authorization', bearers.customer)
      .send({ id: users.other.id, roles: ['customer'], isActive: false })
      .expect(403);
    const other = await request(ctx.app).get(`/api/rest/v1/users/${users.other.id}`).set('authorization', bearers.admin).expect(200);
    expect(other.body).toMatchObject({ firstName: null, isActive: true });
  });

  it.each(['customer', 'retailer'] as const)("a %s cannot list, key or mail another customer's licenses", async (role) => {
    await request(ctx.app).get('/api/rest/v1/licensing/licenses').query({ email: 'other@example.com' }).set('authorization', bearers[role]).expect(404);
    await request(ctx.app)
      .post('/api/rest/v1/licensing/request-license-key')
      .set('authorization', bearers[role])
      .send({ product: 'sportidentConfigPlus', email: 'other@example.com' })
      .expect(404);
    const [license] = (
      await request(ctx.app).get('/api/rest/v1/licensing/licenses').query({ email: 'other@example.com' }).set('authorization', bearers.admin).expect(200)
    ).body;
    const ownEmail = role === 'customer' ? 'cust@example.com' : 'shop@example.com';
    await request(ctx.app)
      .post('/api/rest/v1/licensing/request-license-key')
      .set('authorization', bearers[role])
      .send({ product: 'sportidentConfigPlus', email: ownEmail, licenseId: license.licenseId })
      .expect(404);
    const mine = await request(ctx.app).get('/api/rest/v1/licensing/licenses').set('authorization', bearers[role]).expect(200);
    expect(mine.body).toEqual([]);
  });
});

describe('end to end: bootstrap admin → users → what each sees → a license key', () => {
  it('works as the issue describes', async () => {
    // A client gets a token as the bootstrap admin.
    const adminTokens = await login(ctx.app, 'admin', ADMIN_PASSWORD);
    const admin = `Bearer ${adminTokens.access_token}`;
    // … creates a customer and a retailer through the API.
    const customer = await createUser(ctx.app, admin, { userName: 'e2e-customer', email: 'e2e-customer@example.com', password: PW, firstName: 'Eva' });
    const retailer = await createUser(ctx.app, admin, {
      userName: 'e2e-retailer',
      email: 'e2e-retailer@example.com',
      password: PW,
      roles: ['retailer'],
      erpRetailerEntityId: 'C-7',
    });
    const cust = await bearerOf(ctx.app, 'e2e-customer', PW);
    const ret = await bearerOf(ctx.app, 'e2e-retailer', PW);
    // The customer confirms the address through the verification mail (licenses follow verified addresses).
    await verifyOwnEmail(ctx, cust);
    // Each sees himself, not the other, and nothing staff-only.
    expect((await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', cust).expect(200)).body).toMatchObject({
      sub: String(customer.id),
      roles: ['customer'],
      user_group: 'public',
    });
    expect((await request(ctx.app).get('/api/rest/v1/auth/userinfo').set('authorization', ret).expect(200)).body).toMatchObject({
      sub: String(retailer.id),
      roles: ['retailer'],
      user_group: 'retailer',
      retailer: 'C-7',
    });
    await request(ctx.app).get(`/api/rest/v1/users/${retailer.id}`).set('authorization', cust).expect(404);
    await request(ctx.app).get(`/api/rest/v1/users/${customer.id}`).set('authorization', ret).expect(404);
    await request(ctx.app).get('/api/rest/v1/users').set('authorization', cust).expect(403);
    await request(ctx.app).get('/api/rest/v1/users').set('authorization', ret).expect(403);
    await request(ctx.app)
      .post('/api/rest/v1/licensing/create-licenses')
      .query({ product: 'sportidentCenterPro', numberOfLicenses: 1 })
      .set('authorization', ret)
      .expect(403);
    await request(ctx.app).get('/api/rest/v1/users').set('authorization', admin).expect(200);
    // The admin creates and assigns a license to the customer, who requests the key.
    await request(ctx.app)
      .post('/api/rest/v1/licensing/create-licenses')
      .query({ product: 'sportidentCenterPro', numberOfLicenses: 1 })
      .set('authorization', admin)
      .expect(200);
    await request(ctx.app)
      .post('/api/rest/v1/licensing/assign-license')
      .set('authorization', admin)
      .send({ product: 'sportidentCenterPro', email: 'e2e-customer@example.com' })
      .expect(200);
    await request(ctx.app)
      .post('/api/rest/v1/licensing/request-license-key')
      .set('authorization', cust)
      .send({ product: 'sportidentCenterPro', email: 'e2e-customer@example.com' })
      .expect(200);
    const [license] = (await request(ctx.app).get('/api/rest/v1/licensing/licenses').set('authorization', cust).expect(200)).body;
    // The key verifies offline with the published public key, and fails after one changed byte.
    const { publicKeyPem } = (await request(ctx.app).get('/api/rest/v1/licensing/public-key').expect(200)).body;
    expect(verifyLicenseKey(license.key, publicKeyPem)).toMatchObject({
      licenseId: license.licenseId,
      email: 'e2e-customer@example.com',
      product: 'sportidentCenterPro',
    });
    const bytes = Buffer.from(license.key as string, 'utf8');
    bytes[10] = bytes[10] === 0x41 ? 0x42 : 0x41;
    expect(verifyLicenseKey(bytes.toString('utf8'), publicKeyPem)).toBeNull();
    // The retailer sees none of it.
    await request(ctx.app).get('/api/rest/v1/licensing/licenses').query({ email: 'e2e-customer@example.com' }).set('authorization', ret).expect(404);
  });
});
