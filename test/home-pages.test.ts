/**
 * `/` on each service (a newcomer's first request): a small HTML page linking the reference, the live pages,
 * health and version — or the same as JSON for an API client — and a favicon; every link it names answers.
 */
import request from 'supertest';
import { loadDemoCatalog } from '../services/ordering/src/demo/catalog';
import { startOrdering, type OrderingTestContext } from '../services/ordering/test/support/app';
import { startTiming, type TimingTestContext } from '../services/timing/test/helpers';

let timing: TimingTestContext;
let ordering: OrderingTestContext;
beforeAll(async () => {
  [timing, ordering] = await Promise.all([startTiming(), startOrdering()]);
  await loadDemoCatalog(ordering.database.db);
});
afterAll(async () => {
  await Promise.all([timing?.close(), ordering?.close()]);
});

const services = () => [
  {
    name: 'timing',
    app: timing.app as Parameters<typeof request>[0],
    must: ['/docs', '/healthz', '/api/rest/v1/public/versions', '/events/1/live'],
  },
  {
    name: 'ordering',
    app: ordering.app as unknown as Parameters<typeof request>[0],
    must: ['/docs', '/healthz', '/api/rest/v1/version', '/api/grpc-json/v1/shop/articles'],
  },
];

it.each(['timing', 'ordering'])('%s: / is an HTML page for a browser, JSON for an API client, with a favicon; each link answers', async (name) => {
  const { app, must } = services().find((s) => s.name === name)!;
  const html = await request(app).get('/').set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8').expect(200);
  expect(html.headers['content-type']).toMatch(/^text\/html/);
  expect(html.text).toContain('<link rel="icon" href="/favicon.svg"');
  const json = await request(app).get('/').set('Accept', 'application/json').expect(200);
  expect(json.headers['content-type']).toMatch(/^application\/json/);
  const body = json.body as { service: string; version: string; links: { title: string; href: string }[] };
  expect(body.service).toBe(name);
  expect(body.version).toMatch(/^\d+\.\d+/);
  const hrefs = body.links.map((l) => l.href);
  for (const href of must) {
    expect(hrefs).toContain(href);
    expect(html.text).toContain(`href="${href}"`);
  }
  for (const href of hrefs) {
    const res = await request(app).get(href);
    expect([href, res.status]).toEqual([href, 200]);
  }
  const icon = await request(app).get('/favicon.ico').expect(200);
  expect(icon.headers['content-type']).toMatch(/^image\/svg\+xml/);
  // A negative control: an unknown path is still the documented 404.
  await request(app).get('/no-such-page').expect(404);
});
