/**
 * Prometheus metrics (prom-client) served at `/metrics`: request counts and latency histograms per
 * operationId and status, pool usage, and whatever gauges a service registers (outbox backlog, punches
 * ingested, live connections). One registry per app, so several apps in one process (tests) never clash.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Router } from 'express';
import express from 'express';
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { operationOf } from './openapi';

/** The metrics of one app. */
export interface AppMetrics {
  registry: Registry;
  /** Records every request when it finishes (mount first). */
  middleware: RequestHandler;
  /**
   * Records one finished request (what {@link AppMetrics.middleware} does per request), for a route served
   * outside the Express pipeline; `seconds` from arrival to the end of the response.
   */
  record(operation: string, method: string, status: number, seconds: number): void;
  /** Serves `GET /metrics` in the Prometheus text format. */
  router: Router;
  /**
   * Registers a gauge whose value is read at scrape time. A failing read (e.g. the database is away) keeps
   * the last value and counts `metrics_collect_errors_total{metric}` instead of failing the whole scrape.
   */
  gauge(name: string, help: string, read: () => number | Promise<number>): void;
  /**
   * Registers a gauge with labels whose samples are all read at scrape time: `read` returns one entry per
   * label combination (combinations it no longer returns disappear). Failures as for {@link gauge}.
   */
  labeledGauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Promise<{ labels: Record<L, string>; value: number }[]>,
  ): void;
  /** Registers a counter and returns it (e.g. punches ingested). */
  counter(name: string, help: string): Counter;
}

/**
 * Who may scrape `/metrics` (README "What production changes"): with a `token` (`METRICS_TOKEN`), only a
 * request with `Authorization: Bearer <token>` (compared in constant time; else 401); without one, anyone —
 * unless `production`, where `/metrics` is then not served at all (404), so a production deployment never
 * shows its internals to the public by default.
 */
export interface MetricsAccess {
  token?: string;
  production?: boolean;
}

/** Whether `header` is `Bearer <token>`, compared in constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const expected = createHash('sha256').update(`Bearer ${token}`).digest();
  const presented = createHash('sha256')
    .update(header ?? '')
    .digest();
  return timingSafeEqual(expected, presented);
}

/**
 * Creates the metrics of a service (`service` becomes a default label) including pool gauges; `/metrics`
 * is served as {@link MetricsAccess} says.
 */
export function createMetrics(service: string, pool: pg.Pool, access: MetricsAccess = {}): AppMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by operation and status',
    labelNames: ['operation', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by operation',
    labelNames: ['operation', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const collectErrors = new Counter({
    name: 'metrics_collect_errors_total',
    help: 'Scrape-time metric reads that failed (last value kept)',
    labelNames: ['metric'],
    registers: [registry],
  });
  const gauge = (name: string, help: string, read: () => number | Promise<number>) => {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        try {
          this.set(await read());
        } catch {
          collectErrors.inc({ metric: name });
        }
      },
    });
  };
  const labeledGauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Promise<{ labels: Record<L, string>; value: number }[]>,
  ) => {
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        try {
          const samples = await read();
          this.reset();
          for (const s of samples) this.set(s.labels as Partial<Record<L, string>>, s.value);
        } catch {
          collectErrors.inc({ metric: name });
        }
      },
    });
  };
  gauge('db_pool_connections_total', 'Connections open in the pool', () => pool.totalCount);
  gauge('db_pool_connections_idle', 'Idle connections in the pool', () => pool.idleCount);
  gauge('db_pool_requests_waiting', 'Queries waiting for a connection', () => pool.waitingCount);
  // pg keeps the configured bound in pool.options (not in its typings); total/max is the saturation.
  gauge('db_pool_connections_max', 'Most connections the pool may open', () => Number((pool as unknown as { options?: { max?: number } }).options?.max ?? 10));

  const record = (operation: string, method: string, status: number, seconds: number) => {
    requests.inc({ operation, method, status: String(status) });
    duration.observe({ operation, method }, seconds);
  };
  const middleware: RequestHandler = (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      // Unmatched paths are grouped, so scanners cannot blow up the label set.
      const operation = operationOf(req)?.operationId ?? (req.path === '/metrics' ? 'metrics' : 'unmatched');
      record(operation, req.method, res.statusCode, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
  const router = express.Router();
  router.get('/metrics', async (req, res, next) => {
    if (access.token === undefined && access.production) return next();
    if (access.token !== undefined && !bearerMatches(req.headers.authorization, access.token)) {
      res.status(401).set('WWW-Authenticate', 'Bearer realm="metrics"').type('text/plain').send('Metrics need the metrics token.\n');
      return;
    }
    res.type(registry.contentType).send(await registry.metrics());
  });
  return {
    registry,
    middleware,
    record,
    router,
    gauge,
    labeledGauge,
    counter: (name, help) => new Counter({ name, help, registers: [registry] }),
  };
}
