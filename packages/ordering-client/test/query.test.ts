/**
 * Query parameters as the ordering spec declares them: the `states` filter of `getOrders` (`OrderStatesFilter`,
 * `style: form`, `explode: false`) goes out as one comma list, which the service accepts; repeated, it would be
 * a 400 (services/ordering/test/payment-dev-utils.test.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOrderingClient } from '../src';

let server: Server;
let baseUrl: string;
const urls: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    urls.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ page: 0, size: 10, totalCount: 0, items: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('getOrders sends the states as one comma list', async () => {
  await createOrderingClient({ baseUrl }).getOrders({ states: ['paid', 'transferred'], searchText: 'x' });
  const query = new URLSearchParams(urls[0].slice(urls[0].indexOf('?') + 1));
  expect(query.getAll('states')).toEqual(['paid,transferred']);
  expect(query.get('searchText')).toBe('x');
});
