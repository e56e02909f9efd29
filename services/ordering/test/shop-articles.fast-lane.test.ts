/**
 * The fast lane of the shop article list (src/http/shop-articles.fast-lane.ts): which requests it takes (alone,
 * in front of a marker that stands for the pipeline), and that for every request the app with the fast
 * lane answers exactly as the app without it (status, headers but the request id and date, body).
 */
import express, { type Express } from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { createApp } from '../src/app';
import { loadDemoCatalog } from '../src/demo/catalog';
import { loadSpec } from '@sports-timing/shared';
import { compileShopArticlesLaneRules, shopArticlesFastLane } from '../src/http/shop-articles.fast-lane';
import { deref, valueArb, type Schema, type Spec } from '../../../test/fuzz/openapi-arbitraries';
import { SPEC_FILE } from '../src/version';
import { startOrdering, type OrderingTestContext } from './support/app';

const ARTICLES = '/api/grpc-json/v1/shop/articles';

let ctx: OrderingTestContext;
let fast: Express;
let pipeline: Express;
/** The fast lane alone; requests it passes on get 418 from the marker. */
let laneOnly: Express;
let userToken: string;

beforeAll(async () => {
  ctx = await startOrdering();
  await loadDemoCatalog(ctx.database.db);
  // As in production: no response validation (the pipeline then sends the cached body too). The three apps
  // share ctx's services (maintenance flag reader, article list cache), as the parts of one instance do.
  const { maintenance, articleLists } = ctx.services;
  fast = createApp({ ...ctx.deps, services: ctx.services, validateResponses: false });
  pipeline = createApp({ ...ctx.deps, services: ctx.services, validateResponses: false, fastLane: false });
  laneOnly = express();
  const lane = shopArticlesFastLane({
    spec: loadSpec(SPEC_FILE),
    database: ctx.database,
    articleLists,
    maintenance,
    metrics: fast.locals.metrics,
    logger: ctx.deps.logger,
    httpLog: true,
  });
  laneOnly.use((req, res, next) => lane(req, res, () => next()));
  laneOnly.use((_req, res) => {
    res.status(418).end();
  });
  userToken = await ctx.bearer({ roles: [], userGroup: 'public' });
});
afterAll(async () => ctx.close());

type Case = [string, Record<string, string>];

const CASES: Case[] = [
  [ARTICLES, {}],
  [ARTICLES, { 'accept-language': 'de-CH,de;q=0.9' }],
  [ARTICLES, { 'accept-language': 'fr', 'accept-encoding': 'gzip, deflate, br' }],
  [ARTICLES, { accept: 'application/json', 'accept-encoding': 'identity' }],
  [ARTICLES, { accept: '*/*', 'accept-encoding': 'gzip;q=0, identity' }],
  [`${ARTICLES}?includeSubitemArticles=true`, {}],
  [`${ARTICLES}?includeUnavailableArticles=true&includeSubitemArticles=false`, { 'accept-language': 'en' }],
  [`${ARTICLES}?`, {}],
  // Taken by the pipeline in both apps:
  [`${ARTICLES}?filterByArticleNumbers=BSF8,SIAC1`, {}],
  [`${ARTICLES}?includeSubitemArticles=yes`, {}],
  [`${ARTICLES}?includeSubitemArticles=true&includeSubitemArticles=false`, {}],
  [`${ARTICLES}?unknown=1`, {}],
  [`${ARTICLES}/`, {}],
  [ARTICLES, { accept: 'text/csv' }],
  [ARTICLES, { 'accept-language': 'x'.repeat(501) }],
  [ARTICLES, { 'x-service-client-id': 'unknown-client' }],
  [ARTICLES, { authorization: 'Bearer not-a-token' }],
];

async function answer(app: Express, url: string, headers: Record<string, string>) {
  const res = await request(app)
    .get(url)
    .set(headers)
    .buffer(true)
    .parse((r, done) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => done(null, Buffer.concat(chunks)));
    });
  const { 'x-request-id': requestId, date: _date, ...rest } = res.headers as Record<string, string>;
  expect(requestId).toMatch(/^[\w.-]{1,64}$/);
  return { status: res.status, headers: rest, body: (res.body as Buffer).toString('utf8') };
}

it.each(CASES)('answers %s %j exactly as the pipeline does', async (url, headers) => {
  await ctx.services.caches.clearAll();
  const viaPipeline = await answer(pipeline, url, headers);
  expect(await answer(fast, url, headers)).toEqual(viaPipeline);
});

it('answers generated requests exactly as the pipeline does (spec arbitraries of test/fuzz, fixed seed)', async () => {
  const spec = loadSpec(SPEC_FILE) as unknown as Spec;
  const parameters = ((spec.paths[ARTICLES].get as Schema).parameters as unknown[]).map((p) => deref(spec, p));
  // Each parameter: valid by its schema, or any short text (service-client headers left out: an unknown
  // client id is refused, a known one needs a client of this test).
  const valueOf = (p: Schema) =>
    fc.oneof(
      valueArb(spec, p.schema).map((v) => String(v)),
      fc.string({ maxLength: 8, unit: 'grapheme-ascii' }),
    );
  const query = fc.record(Object.fromEntries(parameters.filter((p) => p.in === 'query').map((p) => [p.name as string, valueOf(p)])), { requiredKeys: [] });
  const headers = fc.record(
    {
      ...Object.fromEntries(parameters.filter((p) => p.in === 'header' && p.name === 'Accept-Language').map((p) => [p.name.toLowerCase(), valueOf(p)])),
      accept: fc.constantFrom('application/json', '*/*', 'text/csv'),
      'accept-encoding': fc.constantFrom('gzip', 'identity'),
    },
    { requiredKeys: [] },
  );
  await fc.assert(
    fc.asyncProperty(query, headers, async (q, h) => {
      const search = new URLSearchParams(q as Record<string, string>).toString();
      const url = search === '' ? ARTICLES : `${ARTICLES}?${search}`;
      const viaPipeline = await answer(pipeline, url, h);
      expect(await answer(fast, url, h as Record<string, string>)).toEqual(viaPipeline);
    }),
    { seed: 20261126, numRuns: 60 },
  );
});

it('answers like the pipeline for a caller with a token (the token decides the user group)', async () => {
  const headers = { authorization: userToken };
  expect(await answer(fast, ARTICLES, headers)).toEqual(await answer(pipeline, ARTICLES, headers));
});

it('takes only plain anonymous lists; the rest goes on to the pipeline', async () => {
  await request(laneOnly).get(ARTICLES).expect(200);
  await request(laneOnly).get(`${ARTICLES}?includeSubitemArticles=true&includeUnavailableArticles=false`).expect(200);
  await request(laneOnly).get(ARTICLES).set('accept-language', 'de').set('accept-encoding', 'gzip').expect(200).expect('content-encoding', 'gzip');
  for (const [url, headers] of CASES.slice(8)) await request(laneOnly).get(url).set(headers).expect(418);
  await request(laneOnly).get(ARTICLES).set('authorization', userToken).expect(418);
  await request(laneOnly).head(ARTICLES).expect(418);
  await request(laneOnly).post(ARTICLES).expect(418);
  await request(laneOnly).get('/api/grpc-json/v1/shop/articles-other').expect(418);
});

it('leaves lists to the pipeline while maintenance mode is on (503 there)', async () => {
  const mode = ctx.services.maintenance;
  await mode.set(true, 'test');
  try {
    await request(laneOnly).get(ARTICLES).expect(418);
    const res = await request(fast).get(ARTICLES).expect(503);
    expect(res.headers['retry-after']).toBeDefined();
  } finally {
    await mode.set(false, 'test');
  }
  await request(laneOnly).get(ARTICLES).expect(200);
});

/** The lane's rules as the app compiles them from the spec it loads. */
const { plainListQuery } = compileShopArticlesLaneRules(loadSpec(SPEC_FILE));

it('reads the flags of a plain query and refuses anything else', () => {
  expect(plainListQuery('')).toEqual({ includeUnavailableArticles: false, includeSubitemArticles: false });
  expect(plainListQuery('includeSubitemArticles=true')).toEqual({ includeUnavailableArticles: false, includeSubitemArticles: true });
  expect(plainListQuery('includeUnavailableArticles=true&includeSubitemArticles=true')).toEqual({
    includeUnavailableArticles: true,
    includeSubitemArticles: true,
  });
  for (const q of [
    'includeSubitemArticles',
    'includeSubitemArticles=',
    'includeSubitemArticles=TRUE',
    'includeSubitemArticles=1',
    'a=1',
    '&',
    'includeSubitemArticles=true&includeSubitemArticles=true',
    'filterByArticleNumbers=',
  ]) {
    expect(plainListQuery(q)).toBeNull();
  }
});

it('follows the spec it is given: the flags it declares as booleans, its Accept-Language limit', () => {
  const spec = loadSpec(SPEC_FILE);
  const operation = spec.paths[ARTICLES].get as { parameters: { $ref?: string; name?: string; in?: string; schema?: unknown }[] };
  // The spec's AcceptLanguage parameter, cut to 5 characters; includeSubitemArticles no longer declared.
  const components = spec.components as { parameters: Record<string, { schema: { maxLength: number } }> };
  const acceptLanguage = Object.values(components.parameters).find((p) => (p as unknown as { name: string }).name === 'Accept-Language')!;
  acceptLanguage.schema.maxLength = 5;
  operation.parameters = operation.parameters.filter((p) => p.name !== 'includeSubitemArticles');
  const rules = compileShopArticlesLaneRules(spec);
  expect(rules.plainListQuery('includeSubitemArticles=true')).toBeNull();
  expect(rules.plainListQuery('includeUnavailableArticles=true')).toEqual({ includeUnavailableArticles: true, includeSubitemArticles: false });
  expect(rules.plainAcceptLanguage('de-CH')).toBe(true);
  expect(rules.plainAcceptLanguage('de-CH,de')).toBe(false);
  // A keyword the lane cannot check stops the app from being built rather than letting the lane guess.
  (acceptLanguage.schema as Record<string, unknown>).format = 'date';
  expect(() => compileShopArticlesLaneRules(spec)).toThrow(/format/);
});
