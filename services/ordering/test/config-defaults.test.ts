/**
 * Derived addresses follow what they derive from unless set (README "Configuration"): PUBLIC_BASE_URL from HOST
 * and ORDERING_PORT (the address in webhook URLs and e-mail links), the ERP and payment base URLs from the
 * simulators' ports.
 */
import { loadOrderingConfig } from '../src/config';

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
});
