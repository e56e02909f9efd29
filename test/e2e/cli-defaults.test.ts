/**
 * The CLI finds the services a newcomer started (the port variables of `pnpm start`, or the URL variables)
 * and shows the API's own reason when a lookup is refused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { batteryLines } from '@sports-timing/cli/src/battery';
import { defaultOrderingUrl, defaultTimingUrl } from '@sports-timing/cli/src/main';
import { loadDemoCatalog } from '../../services/ordering/src/demo/catalog';
import { startOrdering, type OrderingTestContext } from '../../services/ordering/test/support/app';

describe('service addresses', () => {
  it('follow TIMING_URL / ORDERING_URL, else the port variables, else the default ports', () => {
    expect(defaultTimingUrl({})).toBe('http://127.0.0.1:8081');
    expect(defaultTimingUrl({ TIMING_PORT: '9181' })).toBe('http://127.0.0.1:9181');
    expect(defaultTimingUrl({ TIMING_PORT: '9181', TIMING_URL: 'https://timing.example.org' })).toBe('https://timing.example.org');
    expect(defaultOrderingUrl({})).toBe('http://127.0.0.1:8080');
    expect(defaultOrderingUrl({ ORDERING_PORT: '9180' })).toBe('http://127.0.0.1:9180');
    expect(defaultOrderingUrl({ ORDERING_URL: 'https://shop.example.org' })).toBe('https://shop.example.org');
  });
});

describe('punches battery', () => {
  let ordering: OrderingTestContext;
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    ordering = await startOrdering();
    await loadDemoCatalog(ordering.database.db);
    server = http.createServer(ordering.app as unknown as http.RequestListener);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await ordering?.close();
  });

  it('prints the record, and for a refused card the field message of the API rather than the generic title', async () => {
    const { lines, failed } = await batteryLines(url, ['8621484', '1234']);
    expect(lines[0]).toBe('8621484\tbattery 2020-01-15\treplace before 2023-01-15');
    expect(lines[1]).toMatch(/^1234\terror 400: /);
    expect(lines[1]).not.toMatch(/One or more validation errors occurred/);
    expect(failed).toBe(1);
  });
});
