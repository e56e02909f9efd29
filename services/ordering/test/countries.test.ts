import request from 'supertest';
import { codeForCountryId, countryIdForCode, isKnownCountryCode } from '../src/countries/countries.service';
import { canonicalCulture, parseAcceptLanguage, resolveCulture } from '../src/culture/culture';
import { startOrdering, type OrderingTestContext } from './support/app';

let ctx: OrderingTestContext;
let proxied: OrderingTestContext;
beforeAll(async () => {
  ctx = await startOrdering();
  proxied = await startOrdering({ TRUSTED_PROXIES: 'loopback' });
});
afterAll(async () => {
  await ctx.close();
  await proxied.close();
});

interface Country {
  countryCode: string;
  name: string;
}

async function shopCountries(acceptLanguage?: string): Promise<Country[]> {
  const req = request(ctx.app).get('/api/grpc-json/v1/shop/countries');
  if (acceptLanguage !== undefined) req.set('accept-language', acceptLanguage);
  const res = await req.expect(200);
  return res.body.countries as Country[];
}
const nameOf = (list: Country[], code: string) => list.find((c) => c.countryCode === code)?.name;

describe('Accept-Language negotiation', () => {
  it('orders tags by quality, drops q=0, * and malformed entries', () => {
    expect(parseAcceptLanguage('de-CH,de;q=0.9,en;q=0.5')).toEqual(['de-CH', 'de', 'en']);
    expect(parseAcceptLanguage('fr;q=0.4, DE-at;q=0.8, *;q=0.1, it;q=0')).toEqual(['de-AT', 'fr']);
    expect(parseAcceptLanguage('en;q=2, x y, sv')).toEqual(['sv']);
    expect(parseAcceptLanguage(undefined)).toEqual([]);
    expect(canonicalCulture('zh-hant-tw')).toBe('zh-Hant-TW');
  });
  it('matches exactly, then by language, then another region; falls back to English', () => {
    expect(resolveCulture(['de-CH'], ['en', 'de', 'de-CH'])).toBe('de-CH');
    expect(resolveCulture(['de-CH'], ['en', 'de'])).toBe('de');
    expect(resolveCulture(['de'], ['en', 'de-AT'])).toBe('de-AT');
    expect(resolveCulture(['xx', 'fr'], ['en', 'fr'])).toBe('fr');
    expect(resolveCulture(['xx'], ['de', 'en'])).toBe('en');
  });
});

describe('shop countries', () => {
  it('lists every ISO 3166-1 country in English by default, sorted by name', async () => {
    const list = await shopCountries();
    expect(list).toHaveLength(250);
    expect(nameOf(list, 'DE')).toBe('Germany');
    expect(nameOf(list, 'CH')).toBe('Switzerland');
    for (const c of list) expect(c.countryCode).toMatch(/^[A-Z]{2}$/);
    const names = list.map((c) => c.name);
    expect(names).toEqual([...names].sort(new Intl.Collator('en', { sensitivity: 'base' }).compare));
    expect(names[0]).toBe('Afghanistan');
  });

  it('localizes by Accept-Language with quality values and collates in that language', async () => {
    const de = await shopCountries('fr;q=0.4, de;q=0.8');
    expect(nameOf(de, 'DE')).toBe('Deutschland');
    const names = de.map((c) => c.name);
    // German collation puts Ä with A: Ägypten comes before Albanien, not after Z.
    expect(names.indexOf('Ägypten')).toBeLessThan(names.indexOf('Albanien'));
    expect(nameOf(await shopCountries('sv'), 'DE')).toBe('Tyskland');
    expect(nameOf(await shopCountries('ja'), 'JP')).toBe('日本');
    expect(nameOf(await shopCountries('cs-CZ'), 'DE')).toBe('Německo');
    expect(nameOf(await shopCountries('tlh, xx'), 'DE')).toBe('Germany');
  });

  it('uses an imported list for its culture and the library for other cultures', async () => {
    await ctx.database.db
      .insertInto('localized_countries')
      .values([
        { culture: 'de-CH', country_code: 'CH', name: 'Schweiz' },
        { culture: 'de-CH', country_code: 'LI', name: 'Fürstentum Liechtenstein' },
        { culture: 'de-CH', country_code: 'AT', name: 'Österreich' },
      ])
      .execute();
    expect(await shopCountries('de-CH, de;q=0.9')).toEqual([
      { countryCode: 'LI', name: 'Fürstentum Liechtenstein' },
      { countryCode: 'AT', name: 'Österreich' },
      { countryCode: 'CH', name: 'Schweiz' },
    ]);
    expect(await shopCountries('de')).toHaveLength(250);
  });

  it('matches imported cultures case-insensitively', async () => {
    await ctx.database.db.insertInto('localized_countries').values({ culture: 'IT', country_code: 'IT', name: 'Italia' }).execute();
    expect(await shopCountries('it-CH')).toEqual([{ countryCode: 'IT', name: 'Italia' }]);
  });

  it('serves the same list to the card-reservation area', async () => {
    const res = await request(ctx.app).get('/api/rest/v1/get-countries-list').set('accept-language', 'fr').expect(200);
    expect(res.body).toEqual(await shopCountries('fr'));
    expect(res.body.find((c: Country) => c.countryCode === 'DE').name).toBe('Allemagne');
  });
});

describe('country ids', () => {
  it('maps ISO alpha-2 codes to ISO numeric ids and back', () => {
    expect(countryIdForCode('DE')).toBe(276);
    expect(countryIdForCode('at')).toBe(40);
    expect(countryIdForCode('CH')).toBe(756);
    expect(countryIdForCode('XX')).toBeNull();
    expect(countryIdForCode('DEU')).toBeNull();
    expect(codeForCountryId(276)).toBe('DE');
    expect(codeForCountryId(40)).toBe('AT');
    expect(codeForCountryId(4)).toBe('AF');
    expect(codeForCountryId(999)).toBeNull();
    expect(codeForCountryId(0)).toBeNull();
    expect(isKnownCountryCode('FR')).toBe(true);
    expect(isKnownCountryCode('ZZ')).toBe(false);
  });
});

describe('country from IP (offline geo-IP)', () => {
  const lookup = (app: OrderingTestContext, ip?: string) => {
    const req = request(app.app).get('/api/rest/v1/get-country-from-my-ip');
    return ip === undefined ? req : req.query({ ip });
  };

  it('locates public IPv4 and IPv6 addresses', async () => {
    expect((await lookup(ctx, '8.8.8.8').expect(200)).body).toEqual({ ip: '8.8.8.8', countryCode: 'US' });
    expect((await lookup(ctx, '2a00:1450:4001:80b::200e').expect(200)).body).toEqual({ ip: '2a00:1450:4001:80b::200e', countryCode: 'DE' });
    expect((await lookup(ctx, '::ffff:8.8.8.8').expect(200)).body).toEqual({ ip: '8.8.8.8', countryCode: 'US' });
  });

  it('answers null for private, loopback, documentation and link-local addresses', async () => {
    for (const ip of ['10.1.2.3', '192.168.1.1', '172.16.0.1', '127.0.0.1', '100.64.0.1', '192.0.2.1', '::1', 'fe80::1', 'fd00::1', '2001:db8::1']) {
      expect((await lookup(ctx, ip).expect(200)).body).toEqual({ ip, countryCode: null });
    }
  });

  it('rejects what is not an IP literal with errors.ip', async () => {
    for (const ip of ['1.2.3', '999.1.1.1', 'abc', '1:2:3']) {
      const res = await lookup(ctx, ip).expect(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.errors.ip).toEqual(expect.any(Array));
    }
  });

  it('uses the caller address without ip, honouring only trusted proxies', async () => {
    expect((await lookup(ctx).expect(200)).body).toEqual({ ip: '127.0.0.1', countryCode: null });
    expect((await lookup(ctx).set('X-Forwarded-For', '8.8.8.8').expect(200)).body).toEqual({ ip: '127.0.0.1', countryCode: null });
    expect((await lookup(proxied).set('X-Forwarded-For', '8.8.8.8').expect(200)).body).toEqual({ ip: '8.8.8.8', countryCode: 'US' });
  });
});
