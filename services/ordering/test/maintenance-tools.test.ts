import 'reflect-metadata';
import { X509Certificate as NodeX509, constants, createPrivateKey, privateDecrypt, publicEncrypt, sign, verify } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import request from 'supertest';
import { CacheClearListener, CacheRegistry, type ClearResult } from '../src/maintenance/caches';
import { startOrdering, type OrderingTestContext } from './support/app';

let ctx: OrderingTestContext;
let admin: string;
beforeAll(async () => {
  ctx = await startOrdering({ APP_ENV: 'staging' });
  admin = await ctx.bearer({ roles: ['admin'] });
});
afterAll(async () => ctx.close());

/** Splits the response PEM into its private key and certificate. */
function splitPem(pem: string): { keyPem: string; certPem: string } {
  const keyPem = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/.exec(pem)?.[0];
  const certPem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  expect(pem.indexOf('PRIVATE KEY')).toBeLessThan(pem.indexOf('CERTIFICATE'));
  return { keyPem: keyPem!, certPem: certPem! };
}

const YEAR_MS = 365.25 * 24 * 3600 * 1000;

describe('create-encryption-certificate / create-signing-certificate', () => {
  async function fetchCertificate(kind: 'encryption' | 'signing') {
    const res = await request(ctx.app).get(`/api/rest/v1/maintenance/create-${kind}-certificate`).set('authorization', admin).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(typeof res.body).toBe('string');
    return splitPem(res.body as string);
  }

  function checkCommon(cert: x509.X509Certificate, purpose: string) {
    expect(cert.subject).toBe(`CN=ordering staging ${purpose}, O=sports-timing`);
    expect(cert.issuer).toBe(cert.subject);
    const now = Date.now();
    expect(cert.notBefore.getTime()).toBeLessThanOrEqual(now);
    expect(cert.notBefore.getTime()).toBeGreaterThan(now - 5 * 60_000);
    expect(cert.notAfter.getTime() - now).toBeGreaterThan(2 * YEAR_MS - 2 * 24 * 3600 * 1000);
    expect(cert.notAfter.getTime() - now).toBeLessThan(2 * YEAR_MS + 2 * 24 * 3600 * 1000);
    expect(cert.serialNumber).toMatch(/^[0-7][0-9a-f]{31}$/i);
    const bc = cert.getExtension(x509.BasicConstraintsExtension);
    expect(bc?.ca).toBe(false);
    expect(cert.getExtension(x509.SubjectKeyIdentifierExtension)).toBeTruthy();
  }

  it('encryption: RSA 3072, keyEncipherment + dataEncipherment, self-signed, usable for RSA-OAEP', async () => {
    const { keyPem, certPem } = await fetchCertificate('encryption');
    const cert = new x509.X509Certificate(certPem);
    checkCommon(cert, 'encryption');
    const ku = cert.getExtension(x509.KeyUsagesExtension)!;
    expect(ku.critical).toBe(true);
    expect(ku.usages).toBe(x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.dataEncipherment);
    expect(await cert.isSelfSigned()).toBe(true);
    expect(await cert.verify({ signatureOnly: true })).toBe(true);

    const node = new NodeX509(certPem);
    expect(node.publicKey.asymmetricKeyDetails?.modulusLength).toBe(3072);
    expect(node.verify(node.publicKey)).toBe(true);
    const key = createPrivateKey(keyPem);
    expect(node.checkPrivateKey(key)).toBe(true);
    const sealed = publicEncrypt({ key: node.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from('wrapped data key'));
    expect(privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, sealed).toString()).toBe('wrapped data key');
  });

  it('signing: ECDSA P-256, digitalSignature, self-signed, signs and verifies; every call makes a new key and serial', async () => {
    const a = await fetchCertificate('signing');
    const b = await fetchCertificate('signing');
    const cert = new x509.X509Certificate(a.certPem);
    checkCommon(cert, 'signing');
    const ku = cert.getExtension(x509.KeyUsagesExtension)!;
    expect(ku.critical).toBe(true);
    expect(ku.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    expect(await cert.isSelfSigned()).toBe(true);

    const node = new NodeX509(a.certPem);
    expect(node.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const key = createPrivateKey(a.keyPem);
    expect(node.checkPrivateKey(key)).toBe(true);
    const sig = sign('sha256', Buffer.from('license'), key);
    expect(verify('sha256', Buffer.from('license'), node.publicKey, sig)).toBe(true);

    expect(new x509.X509Certificate(b.certPem).serialNumber).not.toBe(cert.serialNumber);
    expect(b.keyPem).not.toBe(a.keyPem);
  });

  it('is admin-only', async () => {
    await request(ctx.app).get('/api/rest/v1/maintenance/create-signing-certificate').expect(401);
    await request(ctx.app)
      .get('/api/rest/v1/maintenance/create-signing-certificate')
      .set('authorization', await ctx.bearer({ roles: ['customer'] }))
      .expect(403);
  });
});

describe('clear-caches', () => {
  it("clears every registered cache of the app's registry", async () => {
    const articles = new Map([['a', 1]]);
    const countries = new Map([['de', 'Deutschland']]);
    const caches = ctx.services.caches;
    const offA = caches.register('test-articles', () => articles.clear());
    const offB = caches.register('test-countries', async () => {
      await new Promise((r) => setTimeout(r, 5));
      countries.clear();
    });
    try {
      await request(ctx.app).post('/api/rest/v1/maintenance/clear-caches').set('authorization', admin).expect(200);
      expect(articles.size).toBe(0);
      expect(countries.size).toBe(0);
    } finally {
      offA();
      offB();
    }
    expect(caches.names()).not.toContain('test-articles');
  });

  it('tells the other instances through PostgreSQL NOTIFY', async () => {
    // Another instance: its own registry and listener, as in a second process.
    const remote = new CacheRegistry('other-instance');
    const remoteCache = new Set(['x']);
    remote.register('remote-catalogue', () => remoteCache.clear());
    let heard: (r: ClearResult) => void = () => undefined;
    const cleared = new Promise<ClearResult>((resolve) => {
      heard = resolve;
    });
    const listener = new CacheClearListener({ url: ctx.testDb.url, registry: remote, onCleared: (r) => heard(r) });
    await listener.start();
    try {
      await request(ctx.app).post('/api/rest/v1/maintenance/clear-caches').set('authorization', admin).expect(200);
      await expect(cleared).resolves.toEqual({ cleared: ['remote-catalogue'], failed: [] });
      expect(remoteCache.size).toBe(0);
    } finally {
      await listener.stop();
    }
  });

  it('a failing cache is reported and does not stop the others', async () => {
    const registry = new CacheRegistry();
    const good = new Set([1]);
    registry.register('good', () => good.clear());
    registry.register('bad', () => {
      throw new Error('boom');
    });
    registry.register('good', () => undefined);
    expect(registry.names()).toEqual(['bad', 'good']);
    await expect(registry.clearAll()).resolves.toEqual({ cleared: ['good'], failed: ['bad'] });
    expect(good.size).toBe(0);
  });

  it('is admin-only', async () => {
    await request(ctx.app).post('/api/rest/v1/maintenance/clear-caches').expect(401);
  });
});
