import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import QRCode from 'qrcode';
import request from 'supertest';
import { createApp } from '../src/app';
import { composeOrdering } from '../src/composition';
import type { OrderingDeps } from '../src/context';
import { smtpMailer } from '../src/mail/mailer';
import { enqueueMail } from '../src/outbox/outbox.service';
import { PASSWORD_CLASSES } from '../src/devtools/passwords';
import { MAX_QR_IMAGE_SIDE } from '../src/devtools/qrcode';
import { startOrdering, type OrderingTestContext } from './support/app';
import { startTestSmtp, type TestSmtp } from './support/smtp';

const ENCRYPTION_KEYS = `1:${Buffer.alloc(32, 9).toString('base64')}`;

let ctx: OrderingTestContext;
let admin: string;
beforeAll(async () => {
  ctx = await startOrdering({ APP_ENV: 'test', ENCRYPTION_KEYS });
  admin = await ctx.bearer({ roles: ['admin'] });
});
afterAll(async () => ctx.close());

/** Another instance of the app over the same database with some dependencies or settings replaced. */
function variant(overrides: Partial<OrderingDeps>, config: Partial<OrderingDeps['config']> = {}) {
  return createApp(composeOrdering({ ...ctx.deps, ...overrides, config: { ...ctx.deps.config, ...config } }));
}

describe('access', () => {
  const adminOnly = [
    '/api/rest/v1/dev/environment',
    '/api/rest/v1/dev/request-headers',
    '/api/rest/v1/dev/remote-ip',
    '/api/rest/v1/dev/get-country-by-ip',
    '/api/rest/v1/dev/encrypt?text=x',
    '/api/rest/v1/dev/decrypt?text=x',
    '/api/rest/v1/dev/get-random-password',
    '/api/rest/v1/dev/qrcode',
  ];
  it('admin-only utilities: 401 anonymous, 403 for customer, retailer and support', async () => {
    const others = await Promise.all((['customer', 'retailer', 'support'] as const).map((r) => ctx.bearer({ roles: [r] })));
    for (const url of adminOnly) {
      await request(ctx.app).get(url).expect(401);
      for (const token of others) await request(ctx.app).get(url).set('authorization', token).expect(403);
    }
    await request(ctx.app).post('/api/rest/v1/dev/transliterate').type('text/plain').send('x').expect(401);
  });
  it('the uptime-monitor status is public', async () => {
    await request(ctx.app).get('/api/rest/v1/dev/uptime-monitor-status').expect(200);
  });
});

describe('dev/environment', () => {
  it('reports name, versions, uptime, database, outbox backlog and dependencies, and never a secret', async () => {
    await ctx.database.db.transaction().execute((trx) => enqueueMail(trx, `env-test:${Date.now()}`, { to: 'a@example.com', subject: 's', text: 't' }));
    const smtpUrl = 'smtp://mailuser:Sm7pPassw0rd@127.0.0.1:9/';
    const app = variant(
      { mailer: smtpMailer(smtpUrl) },
      { smtpUrl, jwtPrivateKeyPem: 'PRIVATE-KEY-MATERIAL', licenseSecretKey: 'license-secret-0123456789abcdef0123' },
    );
    const res = await request(app).get('/api/rest/v1/dev/environment').set('authorization', admin).expect(200);
    expect(res.body).toMatchObject({
      environment: 'test',
      serviceName: 'ordering',
      version: '1.0.0',
      nodeVersion: process.version,
      maintenanceMode: false,
      database: { status: 'up', serverVersion: expect.stringMatching(/^\d+/), latencyMs: expect.any(Number) },
      dependencies: { smtp: 'down', erp: 'disabled', paymentProvider: 'disabled' },
    });
    expect(res.body.outboxPending).toBeGreaterThanOrEqual(1);
    expect(res.body.uptimeSeconds).toBeGreaterThan(0);
    expect(Date.parse(res.body.startedAt)).toBeLessThanOrEqual(Date.now());
    const text = JSON.stringify(res.body);
    for (const secret of ['Sm7pPassw0rd', 'mailuser', 'PRIVATE-KEY-MATERIAL', 'license-secret', ENCRYPTION_KEYS.slice(2), 'postgres://', ctx.testDb.name])
      expect(text).not.toContain(secret);
  });
});

describe('dev/request-headers', () => {
  it('echoes headers with secrets masked', async () => {
    const res = await request(ctx.app)
      .get('/api/rest/v1/dev/request-headers')
      .set('authorization', admin)
      .set('X-Service-Client-Id', 'client-secret-123')
      .set('Cookie', 'session=abc')
      .set('X-Api-Key', 'key-456')
      .set('X-Auth-Token', 'auth-token-789')
      .set('X-Access-Token', 'access-token-012')
      .set('X-Trace', 'visible')
      .expect(200);
    expect(res.body).toMatchObject({
      authorization: '***',
      'x-service-client-id': '***',
      cookie: '***',
      'x-api-key': '***',
      'x-auth-token': '***',
      'x-access-token': '***',
      'x-trace': 'visible',
    });
    expect(JSON.stringify(res.body)).not.toMatch(/client-secret-123|session=abc|key-456|auth-token-789|access-token-012|Bearer/);
  });
});

describe('dev/remote-ip and dev/get-country-by-ip honour only trusted proxies', () => {
  const remoteIp = async (app: ReturnType<typeof createApp>, xff?: string) => {
    const req = request(app).get('/api/rest/v1/dev/remote-ip').set('authorization', admin);
    if (xff) req.set('X-Forwarded-For', xff);
    return (await req.expect(200)).body as { remoteIp: string; socketAddress: string; forwardedFor: string[] };
  };

  it('without trusted proxies: the socket peer, and a spoofed X-Forwarded-For is reported but ignored', async () => {
    expect(await remoteIp(ctx.app)).toEqual({ remoteIp: '127.0.0.1', socketAddress: '127.0.0.1', forwardedFor: [] });
    expect(await remoteIp(ctx.app, '8.8.8.8, 203.0.113.9')).toEqual({
      remoteIp: '127.0.0.1',
      socketAddress: '127.0.0.1',
      forwardedFor: ['8.8.8.8', '203.0.113.9'],
    });
    const country = await request(ctx.app).get('/api/rest/v1/dev/get-country-by-ip').set('authorization', admin).set('X-Forwarded-For', '8.8.8.8').expect(200);
    expect(country.body).toEqual({ ip: '127.0.0.1', countryCode: null });
  });

  it('behind a trusted proxy: the nearest untrusted address of X-Forwarded-For', async () => {
    const app = variant({}, { trustedProxies: ['loopback'] });
    expect((await remoteIp(app, '8.8.8.8')).remoteIp).toBe('8.8.8.8');
    // The client can prepend anything; only the address the trusted proxy appended counts.
    expect((await remoteIp(app, '81.2.69.142, 8.8.8.8')).remoteIp).toBe('8.8.8.8');
    const country = await request(app).get('/api/rest/v1/dev/get-country-by-ip').set('authorization', admin).set('X-Forwarded-For', '81.2.69.142').expect(200);
    expect(country.body).toEqual({ ip: '81.2.69.142', countryCode: 'GB' });
  });

  it('through a chain of trusted proxies, and not through a proxy that is not configured', async () => {
    const chain = variant({}, { trustedProxies: ['loopback', '10.0.0.0/8'] });
    expect((await remoteIp(chain, '198.51.100.7, 10.1.2.3')).remoteIp).toBe('198.51.100.7');
    const loopbackOnly = variant({}, { trustedProxies: ['loopback'] });
    expect((await remoteIp(loopbackOnly, '198.51.100.7, 10.1.2.3')).remoteIp).toBe('10.1.2.3');
    const elsewhere = variant({}, { trustedProxies: ['10.9.9.9'] });
    expect((await remoteIp(elsewhere, '8.8.8.8')).remoteIp).toBe('127.0.0.1');
  });

  it('looks up a given address; private and reserved ones have no country; non-addresses are 400', async () => {
    const lookup = (ip: string) => request(ctx.app).get('/api/rest/v1/dev/get-country-by-ip').query({ ip }).set('authorization', admin);
    expect((await lookup('8.8.8.8').expect(200)).body).toEqual({ ip: '8.8.8.8', countryCode: 'US' });
    expect((await lookup('2001:4860:4860::8888').expect(200)).body).toEqual({ ip: '2001:4860:4860::8888', countryCode: 'US' });
    expect((await lookup('::ffff:81.2.69.142').expect(200)).body).toEqual({ ip: '81.2.69.142', countryCode: 'GB' });
    expect((await lookup('10.1.2.3').expect(200)).body).toEqual({ ip: '10.1.2.3', countryCode: null });
    const bad = await lookup('abc').expect(400);
    expect(bad.body.errors).toHaveProperty('ip');
    await lookup('8.8.8.8; drop').expect(400);
  });
});

describe('dev/transliterate', () => {
  const post = () => request(ctx.app).post('/api/rest/v1/dev/transliterate').set('authorization', admin);

  it('turns text/plain into ASCII text/plain', async () => {
    const res = await post().type('text/plain').send('Zürich Ødegård, Straße – Москва 北京 😀 café').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('Zurich Odegard, Strasse - Moskva Bei Jing  cafe');
    expect([...res.text].every((c) => c.charCodeAt(0) < 0x80)).toBe(true);
  });

  it('accepts the JSON form too, and keeps line breaks', async () => {
    const res = await post().send({ text: 'Łódź\nGöteborg' }).expect(200);
    expect(res.text).toBe('Lodz\nGoteborg');
  });

  it('bounds the input and the media type', async () => {
    await post().type('text/plain').send('ä'.repeat(10_000)).expect(200);
    const tooLong = await post().type('text/plain').send('a'.repeat(10_001));
    expect(tooLong.status).toBe(400);
    await post().send({ text: 'x', extra: 1 }).expect(400);
    await post().type('application/xml').send('<x/>').expect(415);
    const huge = await post().type('text/plain').send('a'.repeat(70_000));
    expect(huge.status).toBe(413);
  });
});

describe('dev/get-random-password', () => {
  const get = (query: Record<string, string> = {}) => request(ctx.app).get('/api/rest/v1/dev/get-random-password').query(query).set('authorization', admin);
  const allowed = Object.values(PASSWORD_CLASSES).join('');

  it('defaults to 20 characters with every class, no look-alikes, not cacheable', async () => {
    const res = await get().expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const pw = res.body.password as string;
    expect(pw).toHaveLength(20);
    for (const cls of Object.values(PASSWORD_CLASSES)) expect([...pw].some((c) => cls.includes(c))).toBe(true);
    expect([...pw].every((c) => allowed.includes(c))).toBe(true);
    expect(pw).not.toMatch(/[IOlo01]/);
  });

  it('honours the spec bounds 8–128', async () => {
    expect((await get({ length: '8' }).expect(200)).body.password).toHaveLength(8);
    expect((await get({ length: '128' }).expect(200)).body.password).toHaveLength(128);
    await get({ length: '7' }).expect(400);
    await get({ length: '129' }).expect(400);
    await get({ length: 'x' }).expect(400);
  });

  it('is random: no repeats, and every character of the alphabet turns up', async () => {
    const seen = new Set<string>();
    const chars = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const pw = (await get({ length: '128' }).expect(200)).body.password as string;
      seen.add(pw);
      for (const c of pw) chars.add(c);
    }
    expect(seen.size).toBe(30);
    expect(chars.size).toBe(allowed.length);
  });
});

describe('dev/qrcode', () => {
  const get = (query: Record<string, string> = {}) =>
    request(ctx.app)
      .get('/api/rest/v1/dev/qrcode')
      .query(query)
      .set('authorization', admin)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });
  const pngSide = (b: Buffer) => b.readUInt32BE(16);
  const modules = (content: string, ecc: 'L' | 'M' | 'Q' | 'H' = 'M') => QRCode.create(content, { errorCorrectionLevel: ecc }).modules.size;

  it('renders the default address as PNG, 20 pixels per module plus a 4-module quiet zone', async () => {
    const res = await get().expect(200);
    expect(res.headers['content-type']).toBe('image/png');
    const png = res.body as Buffer;
    expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    expect(pngSide(png)).toBe((modules('https://www.sportident.com/') + 8) * 20);
  });

  it('scales with pixels and grows with the error correction level', async () => {
    const small = (await get({ content: 'SI-8621484', pixels: '2' }).expect(200)).body as Buffer;
    const large = (await get({ content: 'SI-8621484', pixels: '10' }).expect(200)).body as Buffer;
    expect(pngSide(large)).toBe(pngSide(small) * 5);
    const long = 'https://www.sportident.com/products/si-cards/siac?card=8621484&lang=de';
    const l = (await get({ content: long, ecc: 'L', pixels: '1' }).expect(200)).body as Buffer;
    const h = (await get({ content: long, ecc: 'H', pixels: '1' }).expect(200)).body as Buffer;
    expect(pngSide(h)).toBeGreaterThan(pngSide(l));
    expect(pngSide(h)).toBe(modules(long, 'H') + 8);
  });

  it('encodes the largest PNG off the event loop, and byte for byte what qrcode renders', async () => {
    const content = 'SI-8621484 '.repeat(80);
    const pixels = Math.floor(MAX_QR_IMAGE_SIDE / (modules(content) + 8));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = performance.now();
    const png = (await get({ content, pixels: String(pixels) }).expect(200)).body as Buffer;
    const took = performance.now() - started;
    delay.disable();
    expect(pngSide(png)).toBeGreaterThan(MAX_QR_IMAGE_SIDE - modules(content) - 8);
    // Encoding takes ≈1.5 s here; on the event loop the loop would stall for as long (the negative control).
    expect(delay.max / 1e6).toBeLessThan(Math.max(250, took / 4));
    // The bytes against the library's own rendering on a smaller image of the same content: rendering the
    // largest one again on the test's thread would double the test's CPU for no further evidence.
    const small = (await get({ content, pixels: '2' }).expect(200)).body as Buffer;
    const expected = await QRCode.toBuffer(content, {
      errorCorrectionLevel: 'M',
      margin: 4,
      type: 'png',
      scale: 2,
      rendererOpts: { deflateLevel: 9, colorType: 0, filterType: 2 },
    } as QRCode.QRCodeToBufferOptions);
    expect(small.equals(expected)).toBe(true);
  });

  it('renders SVG and UTF-8 text with their media types', async () => {
    const svg = await get({ format: 'svg', pixels: '4', content: 'hello' }).expect(200);
    expect(svg.headers['content-type']).toMatch(/^image\/svg\+xml/);
    const text = (svg.body as Buffer).toString('utf8');
    const side = (modules('hello') + 8) * 4;
    expect(text).toMatch(
      new RegExp(`^<svg xmlns="http://www.w3.org/2000/svg" width="${side}" height="${side}" viewBox="0 0 ${modules('hello') + 8} ${modules('hello') + 8}"`),
    );
    expect(text.trim().endsWith('</svg>')).toBe(true);
    expect(text).toMatch(/<path[^>]+d="M[^"]+"/);

    const utf8 = await get({ format: 'utf8', content: 'hello' }).expect(200);
    expect(utf8.headers['content-type']).toMatch(/^text\/plain/);
    expect((utf8.body as Buffer).toString('utf8')).toMatch(/[█▀▄]/);
  });

  it('rejects out-of-range pixels, unknown formats and levels, content that does not fit, and oversized images', async () => {
    await get({ pixels: '0' }).expect(400);
    await get({ pixels: '51' }).expect(400);
    await get({ format: 'gif' }).expect(400);
    await get({ ecc: 'X' }).expect(400);
    const notFitting = await get({ content: 'x'.repeat(2000), ecc: 'H' }).expect(400);
    expect(JSON.parse((notFitting.body as Buffer).toString()).errors).toHaveProperty('content');
    const tooBig = await get({ content: 'x'.repeat(1000), pixels: '50' }).expect(400);
    expect(JSON.parse((tooBig.body as Buffer).toString()).errors).toHaveProperty('pixels');
    await get({ content: 'x'.repeat(1000), pixels: '50', format: 'utf8' }).expect(200);
  });
});

describe('dev/uptime-monitor-status', () => {
  const servers: http.Server[] = [];
  /** A local HTTP server answering every request with `status`, or never when `status` is 0. */
  async function serve(status: number): Promise<string> {
    const server = http.createServer((_req, res) => {
      if (status) res.writeHead(status).end();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startTestSmtp();
  });
  afterAll(async () => {
    await smtp.stop();
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
  });
  const status = async (app: ReturnType<typeof createApp>) => (await request(app).get('/api/rest/v1/dev/uptime-monitor-status').expect(200)).body;

  it('ok with the database up and unconfigured dependencies disabled', async () => {
    const body = await status(variant({}));
    expect(body).toMatchObject({ status: 'ok', checks: { database: 'up', smtp: 'disabled', erp: 'disabled', paymentProvider: 'disabled' } });
    expect(Date.parse(body.checkedAt)).toBeLessThanOrEqual(Date.now());
  });

  it('ok with SMTP and probes answering (a 401 from the ERP means it is there)', async () => {
    const { httpProbe } = await import('../src/devtools/status');
    const app = variant(
      { mailer: smtpMailer(smtp.url), statusProbes: { erp: httpProbe(await serve(401)), paymentProvider: httpProbe(await serve(200)) } },
      { smtpUrl: smtp.url },
    );
    expect(await status(app)).toMatchObject({ status: 'ok', checks: { database: 'up', smtp: 'up', erp: 'up', paymentProvider: 'up' } });
  });

  it('runs the checks in parallel, each bounded by its timeout, and shares one round between concurrent callers', async () => {
    const { DependencyMonitor, httpProbe } = await import('../src/devtools/status');
    let probes = 0;
    const hanging = { check: () => new Promise<'up'>(() => probes++) };
    const monitor = new DependencyMonitor({
      pool: ctx.database.pool,
      mailer: { isUp: () => new Promise<boolean>(() => undefined) },
      smtpConfigured: true,
      probes: { erp: hanging, paymentProvider: hanging },
      timeoutMs: 300,
    });
    const reports = Promise.all([monitor.report(), monitor.report()]);
    // Both hanging probes have started before either check could time out: the checks run side by side, not
    // one after another (one after another, the second would start only when the first's 300 ms ran out).
    await new Promise((r) => setImmediate(r));
    expect(probes).toBe(2);
    const [a, b] = await reports;
    expect(a).toBe(b);
    expect(probes).toBe(2);
    expect(a).toMatchObject({ database: { status: 'up' }, smtp: 'down', erp: 'down', paymentProvider: 'down' });
    const closed = await serve(200);
    servers.at(-1)!.close();
    const refused = new DependencyMonitor({
      pool: ctx.database.pool,
      mailer: { isUp: async () => true },
      smtpConfigured: false,
      probes: { erp: httpProbe(closed) },
    });
    expect((await refused.report()).erp).toBe('down');
  });

  it('degraded with the state of each when dependencies fail, within the 3-second bound even if one hangs', async () => {
    const { httpProbe } = await import('../src/devtools/status');
    const deadSmtp = 'smtp://127.0.0.1:9/';
    const app = variant(
      { mailer: smtpMailer(deadSmtp), statusProbes: { erp: httpProbe(await serve(503)), paymentProvider: httpProbe(await serve(0)) } },
      { smtpUrl: deadSmtp },
    );
    const started = Date.now();
    const body = await status(app);
    const elapsed = Date.now() - started;
    expect(body).toMatchObject({ status: 'degraded', checks: { database: 'up', smtp: 'down', erp: 'down', paymentProvider: 'down' } });
    // The 3 s timeout ran out (the hanging SMTP check answered "down", not the test's own deadline).
    expect(elapsed).toBeGreaterThanOrEqual(2_900);
    // Cached for 30 seconds: a second call answers with the same round (no new checks were run).
    expect((await status(app)).checkedAt).toBe(body.checkedAt);
  });
});
