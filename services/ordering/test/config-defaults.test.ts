/**
 * Derived addresses follow what they derive from unless set (README "Configuration"): PUBLIC_BASE_URL from HOST
 * and ORDERING_PORT (the address in webhook URLs and e-mail links), the ERP and payment base URLs from the
 * simulators' ports. The payment mode and the discount hold have the defaults the README's table states.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadOrderingConfig } from '../src/config';

/** The default column of the README Configuration table's row of `name`. */
function readmeDefault(name: string): string {
  const readme = readFileSync(path.join(__dirname, '../../../README.md'), 'utf8');
  const row = readme.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
  if (!row) throw new Error(`README has no row for ${name}`);
  return row.split('|')[2].trim();
}

describe('derived defaults of the ordering configuration', () => {
  it('PUBLIC_BASE_URL follows ORDERING_PORT and HOST unless set', () => {
    expect(loadOrderingConfig({}).publicBaseUrl).toBe('http://127.0.0.1:8080');
    expect(loadOrderingConfig({ ORDERING_PORT: '9180' }).publicBaseUrl).toBe('http://127.0.0.1:9180');
    expect(loadOrderingConfig({ ORDERING_PORT: '9180', HOST: 'shop.local' }).publicBaseUrl).toBe('http://shop.local:9180');
    expect(loadOrderingConfig({ ORDERING_PORT: '9180', HOST: '0.0.0.0' }).publicBaseUrl).toBe('http://127.0.0.1:9180');
    expect(loadOrderingConfig({ HOST: '::1' }).publicBaseUrl).toBe('http://[::1]:8080');
    expect(loadOrderingConfig({ ORDERING_PORT: '9180', PUBLIC_BASE_URL: 'https://shop.example.org' }).publicBaseUrl).toBe('https://shop.example.org');
  });

  it("the ERP and payment base URLs follow the simulators' ports unless set", () => {
    const c = loadOrderingConfig({ ERP_SIMULATOR_PORT: '9190', PAYMENT_SIMULATOR_PORT: '9191' });
    expect(c.erpBaseUrlWeclapp).toBe('http://127.0.0.1:9190/webapp/api/v1');
    expect(c.erpBaseUrlWeclappSandbox).toBe('http://127.0.0.1:9190/sandbox/webapp/api/v1');
    expect(c.paymentBaseUrl).toBe('http://127.0.0.1:9191/api/v1');
    expect(loadOrderingConfig({ ERP_SIMULATOR_PORT: '9190', ERP_BASE_URL_WECLAPP: 'https://t.weclapp.com/webapp/api/v1' }).erpBaseUrlWeclapp).toBe(
      'https://t.weclapp.com/webapp/api/v1',
    );
  });

  it('a port variable that is no port names itself', () => {
    expect(() => loadOrderingConfig({ ERP_SIMULATOR_PORT: 'abc' })).toThrow(/ERP_SIMULATOR_PORT/);
  });

  it('PAYMENT_MODE is LIVE in production and TEST elsewhere, as the README states', () => {
    expect(readmeDefault('PAYMENT_MODE')).toBe('`TEST`, `LIVE` with `APP_ENV=production`');
    expect(loadOrderingConfig({}).paymentMode).toBe('TEST');
    expect(loadOrderingConfig({ APP_ENV: 'staging' }).paymentMode).toBe('TEST');
    expect(loadOrderingConfig({ APP_ENV: 'production' }).paymentMode).toBe('LIVE');
    expect(loadOrderingConfig({ APP_ENV: 'production', PAYMENT_MODE: 'TEST' }).paymentMode).toBe('TEST');
    expect(() => loadOrderingConfig({ PAYMENT_MODE: 'live' })).toThrow(/PAYMENT_MODE/);
  });

  it('DISCOUNT_HOLD_MINUTES defaults to the README value', () => {
    expect(readmeDefault('DISCOUNT_HOLD_MINUTES')).toBe('`60`');
    expect(loadOrderingConfig({}).discountHoldMinutes).toBe(60);
    expect(loadOrderingConfig({ DISCOUNT_HOLD_MINUTES: '15' }).discountHoldMinutes).toBe(15);
  });
});
