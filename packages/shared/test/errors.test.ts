import express from 'express';
import request from 'supertest';
import { ApiError, envReader, ConfigError, maskHeaders, problemErrorHandler, redactUrl, rpcStatusErrorHandler, validationError } from '../src';

function appThrowing(err: unknown, area: 'problem' | 'rpc') {
  const app = express();
  app.use(express.json());
  app.post('/x', (_req, _res) => {
    throw err;
  });
  app.get('/x', () => {
    throw err;
  });
  app.use(area === 'rpc' ? rpcStatusErrorHandler() : problemErrorHandler());
  return app;
}

describe('problem+json area', () => {
  it('renders an ApiError with field errors in the ASP.NET Core shape', async () => {
    const res = await request(appThrowing(validationError({ cardNumber: ['out of range'] }), 'problem'))
      .get('/x')
      .expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ title: 'One or more validation errors occurred.', status: 400, errors: { cardNumber: ['out of range'] } });
  });
  it('maps a JSON syntax error to 400', async () => {
    const res = await request(appThrowing(new Error('unused'), 'problem'))
      .post('/x')
      .set('content-type', 'application/json')
      .send('{"a":')
      .expect(400);
    expect(res.body).toMatchObject({ status: 400, detail: 'The request body is not valid JSON.' });
  });
  it('hides internals of unknown errors behind a 500', async () => {
    const res = await request(appThrowing(new Error('select * from secret_table'), 'problem'))
      .get('/x')
      .expect(500);
    expect(JSON.stringify(res.body)).not.toMatch(/secret_table/);
    expect(res.body).toMatchObject({ status: 500, title: 'Internal Server Error' });
  });
  it('answers 503 with Retry-After when the database is unreachable', async () => {
    const res = await request(appThrowing(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'problem'))
      .get('/x')
      .expect(503);
    expect(res.headers['retry-after']).toBe('2');
  });
  it('sends error headers such as Allow', async () => {
    const res = await request(appThrowing(new ApiError(405, 'no', { headers: { Allow: 'GET' } }), 'problem'))
      .get('/x')
      .expect(405);
    expect(res.headers.allow).toBe('GET');
  });
});

describe('google.rpc.Status area', () => {
  it('maps HTTP status to the gRPC code and field errors to BadRequest violations', async () => {
    const res = await request(appThrowing(validationError({ numberOfServiceIds: ['must be <= 20'] }), 'rpc'))
      .get('/x')
      .expect(400);
    expect(res.body).toEqual({
      code: 3,
      message: 'One or more validation errors occurred.',
      details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'numberOfServiceIds', description: 'must be <= 20' }] }],
    });
  });
  it('uses NOT_FOUND for 404', async () => {
    const res = await request(appThrowing(new ApiError(404, 'Article not found.'), 'rpc'))
      .get('/x')
      .expect(404);
    expect(res.body).toEqual({ code: 5, message: 'Article not found.', details: [] });
  });
});

describe('config', () => {
  it('names the variable and the expectation on bad values', () => {
    const e = envReader({ PORT: 'eighty', FLAG: 'maybe', URL: 'nope' });
    expect(() => e.int('PORT', 1, 0, 65535)).toThrow(new ConfigError('PORT', 'eighty', 'an integer between 0 and 65535'));
    expect(() => e.bool('FLAG', false)).toThrow(ConfigError);
    expect(() => e.url('URL', ['postgres'])).toThrow(/URL/);
    expect(e.int('MISSING', 7)).toBe(7);
  });
});

describe('redaction', () => {
  it('masks secret query values and headers', () => {
    expect(redactUrl('/api/rest/v1/erp/webhook?erpSystem=weclapp&secret=abc')).toBe('/api/rest/v1/erp/webhook?erpSystem=weclapp&secret=***');
    // A key carried in the path (ROC clients): the segment after `key`, in any case, query or not.
    expect(redactUrl('/roc/key/tk_secret/getpunches.asp?unitId=1&lastId=0')).toBe('/roc/key/***/getpunches.asp?unitId=1&lastId=0');
    expect(redactUrl('/ROC/KEY/tk_secret/sendpunches_v2.php')).toBe('/ROC/KEY/***/sendpunches_v2.php');
    expect(redactUrl('/api/rest/v1/keys/12')).toBe('/api/rest/v1/keys/12');
    expect(maskHeaders({ authorization: 'Bearer x', apikey: 'k', accept: '*/*' })).toEqual({ authorization: '***', apikey: '***', accept: '*/*' });
  });
});
