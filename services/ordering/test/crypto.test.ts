import { createCipheriv, randomBytes } from 'node:crypto';
import request from 'supertest';
import { DecryptionError, EncryptionKeyError, EnvelopeEncryption, generateKeyRingSpec, parseKeyRing } from '../src/crypto/aead';
import { startOrdering, type OrderingTestContext } from './support/app';

const key = (b: number) => Buffer.alloc(32, b).toString('base64');
const ring1 = `1:${key(1)}`;
const ring12 = `1:${key(1)},2:${key(2)}`;

/** Decodes, lets `mutate` change the bytes, re-encodes. */
function tamper(ciphertext: string, mutate: (raw: Buffer) => Buffer): string {
  return mutate(Buffer.from(ciphertext, 'base64url')).toString('base64url');
}

describe('EnvelopeEncryption (AES-256-GCM)', () => {
  const enc = EnvelopeEncryption.fromSpec(ring12);

  it('round-trips UTF-8 text bound to its AAD, with the documented layout', () => {
    const ct = enc.encrypt('Zürich – 🔑 token', 'erp-api-token:weclapp');
    expect(ct).toMatch(/^[A-Za-z0-9_-]+$/);
    const raw = Buffer.from(ct, 'base64url');
    expect(raw[0]).toBe(2);
    expect(raw.length).toBe(1 + 12 + Buffer.byteLength('Zürich – 🔑 token') + 16);
    expect(enc.decrypt(ct, 'erp-api-token:weclapp')).toBe('Zürich – 🔑 token');
    expect(enc.decrypt(enc.encrypt('', 'x'), 'x')).toBe('');
  });

  it('uses a fresh nonce for every encryption', () => {
    const a = enc.encrypt('same', 'ctx');
    const b = enc.encrypt('same', 'ctx');
    expect(a).not.toBe(b);
    expect(Buffer.from(a, 'base64url').subarray(1, 13).equals(Buffer.from(b, 'base64url').subarray(1, 13))).toBe(false);
  });

  it('rejects a wrong AAD and a ciphertext swapped between rows', () => {
    const weclapp = enc.encrypt('token-A', 'erp-api-token:weclapp');
    const sandbox = enc.encrypt('token-B', 'erp-api-token:weclappSandbox');
    expect(() => enc.decrypt(weclapp, 'erp-api-token:weclappSandbox')).toThrow(DecryptionError);
    expect(() => enc.decrypt(sandbox, 'erp-api-token:weclapp')).toThrow(DecryptionError);
    expect(() => enc.decrypt(weclapp, '')).toThrow(DecryptionError);
  });

  it('rejects a truncated tag, whether cut by 1, 4 or 15 bytes', () => {
    const ct = enc.encrypt('secret value', 'ctx');
    for (const cut of [1, 4, 15]) {
      expect(() =>
        enc.decrypt(
          tamper(ct, (r) => r.subarray(0, r.length - cut)),
          'ctx',
        ),
      ).toThrow(DecryptionError);
    }
  });

  it('rejects a ciphertext carrying a short (4-byte) GCM tag', () => {
    // Forging a 4-byte tag is feasible; such a ciphertext must fail because the tag length is fixed at 16.
    const k = Buffer.alloc(32, 2);
    const nonce = randomBytes(12);
    const header = Buffer.from([2]);
    const c = createCipheriv('aes-256-gcm', k, nonce, { authTagLength: 4 });
    c.setAAD(Buffer.concat([header, Buffer.from('ctx')]));
    const body = Buffer.concat([c.update('long enough to pass the length check', 'utf8'), c.final()]);
    const short = Buffer.concat([header, nonce, body, c.getAuthTag()]).toString('base64url');
    expect(() => enc.decrypt(short, 'ctx')).toThrow(DecryptionError);
  });

  it('rejects every single bit flip (header, nonce, body, tag)', () => {
    const ct = enc.encrypt('flip me', 'ctx');
    const n = Buffer.from(ct, 'base64url').length;
    for (let i = 0; i < n; i++) {
      for (const bit of [0x01, 0x80]) {
        const flipped = tamper(ct, (r) => {
          const c = Buffer.from(r);
          c[i] ^= bit;
          return c;
        });
        expect(() => enc.decrypt(flipped, 'ctx')).toThrow(DecryptionError);
      }
    }
  });

  it('rejects an unknown key version and a version byte rewritten to another configured key', () => {
    const ct = enc.encrypt('v2 secret', 'ctx');
    expect(() => EnvelopeEncryption.fromSpec(ring1).decrypt(ct, 'ctx')).toThrow(DecryptionError);
    expect(() =>
      enc.decrypt(
        tamper(ct, (r) => Buffer.concat([Buffer.from([1]), r.subarray(1)])),
        'ctx',
      ),
    ).toThrow(DecryptionError);
    expect(() =>
      enc.decrypt(
        tamper(ct, (r) => Buffer.concat([Buffer.from([9]), r.subarray(1)])),
        'ctx',
      ),
    ).toThrow(DecryptionError);
  });

  it('rejects garbage, empty and too-short input', () => {
    for (const bad of ['', 'not base64!', 'AAAA', 'A'.repeat(38), '%%%', Buffer.alloc(40).toString('base64url')]) {
      expect(() => enc.decrypt(bad, 'ctx')).toThrow(DecryptionError);
    }
  });

  it('rotates: the newest key encrypts, all configured keys decrypt, old ciphertexts are flagged', () => {
    const old = EnvelopeEncryption.fromSpec(ring1);
    const before = old.encrypt('stored before rotation', 'ctx');
    const rotated = EnvelopeEncryption.fromSpec(ring12);
    expect(rotated.currentVersion).toBe(2);
    expect(rotated.versions).toEqual([1, 2]);
    expect(rotated.decrypt(before, 'ctx')).toBe('stored before rotation');
    expect(rotated.needsReencryption(before)).toBe(true);
    const after = rotated.encrypt('stored after rotation', 'ctx');
    expect(rotated.keyVersionOf(after)).toBe(2);
    expect(rotated.needsReencryption(after)).toBe(false);
    // Once key 1 is retired, only re-encrypted values remain readable.
    const retired = EnvelopeEncryption.fromSpec(`2:${key(2)}`);
    expect(retired.decrypt(after, 'ctx')).toBe('stored after rotation');
    expect(() => retired.decrypt(before, 'ctx')).toThrow(DecryptionError);
  });

  it('parses ENCRYPTION_KEYS strictly and never echoes a key in its errors', () => {
    expect([...parseKeyRing(` 3:${key(3)} , 1:${Buffer.alloc(32, 1).toString('base64url')}`).keys()]).toEqual([3, 1]);
    const secret = Buffer.alloc(31, 7).toString('base64');
    for (const bad of ['', '1', `0:${key(1)}`, `256:${key(1)}`, `1:${secret}`, `1:${key(1)},1:${key(2)}`, `x:${key(1)}`]) {
      let err: unknown;
      try {
        parseKeyRing(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EncryptionKeyError);
      expect((err as Error).message).not.toContain(secret);
    }
    expect(parseKeyRing(generateKeyRingSpec(7)).get(7)).toHaveLength(32);
  });
});

describe('dev/encrypt and dev/decrypt', () => {
  let ctx: OrderingTestContext;
  let admin: string;
  beforeAll(async () => {
    ctx = await startOrdering({ ENCRYPTION_KEYS: ring12 });
    admin = await ctx.bearer({ roles: ['admin'] });
  });
  afterAll(async () => ctx.close());

  const encrypt = async (text: string) =>
    (await request(ctx.app).get('/api/rest/v1/dev/encrypt').query({ text }).set('authorization', admin).expect(200)).body as {
      ciphertext: string;
      keyVersion: number;
    };

  it('round-trips a text through the API with URL-safe output and the current key version', async () => {
    const { ciphertext, keyVersion } = await encrypt('Grüße & a+b=c/d?');
    expect(keyVersion).toBe(2);
    expect(ciphertext).toMatch(/^[A-Za-z0-9_-]+$/);
    const res = await request(ctx.app).get(`/api/rest/v1/dev/decrypt?text=${ciphertext}`).set('authorization', admin).expect(200);
    expect(res.body).toEqual({ text: 'Grüße & a+b=c/d?' });
  });

  it('binds the utility to its own context: a stored secret of another context does not decrypt', async () => {
    const foreign = EnvelopeEncryption.fromSpec(ring12).encrypt('erp token', 'erp-api-token:weclapp');
    const res = await request(ctx.app).get('/api/rest/v1/dev/decrypt').query({ text: foreign }).set('authorization', admin).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body.errors).toHaveProperty('text');
  });

  it('answers 400, never 500, for tampered, truncated, wrong-version and garbage input', async () => {
    const { ciphertext } = await encrypt('payload');
    const flipped = tamper(ciphertext, (r) => {
      const c = Buffer.from(r);
      c[20] ^= 1;
      return c;
    });
    const truncated = tamper(ciphertext, (r) => r.subarray(0, r.length - 8));
    const wrongVersion = tamper(ciphertext, (r) => Buffer.concat([Buffer.from([7]), r.subarray(1)]));
    for (const text of [flipped, truncated, wrongVersion, 'AAAA', 'x', 'not+base64/at=all', '====', 'A'.repeat(4096)]) {
      const res = await request(ctx.app).get('/api/rest/v1/dev/decrypt').query({ text }).set('authorization', admin);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).not.toMatch(/tag|auth|gcm|stack/i);
    }
    await request(ctx.app)
      .get('/api/rest/v1/dev/decrypt')
      .query({ text: 'A'.repeat(4097) })
      .set('authorization', admin)
      .expect(400);
  });

  it('is admin-only', async () => {
    await request(ctx.app).get('/api/rest/v1/dev/encrypt').query({ text: 'x' }).expect(401);
    await request(ctx.app)
      .get('/api/rest/v1/dev/encrypt')
      .query({ text: 'x' })
      .set('authorization', await ctx.bearer({ roles: ['support'] }))
      .expect(403);
  });
});
