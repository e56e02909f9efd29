/**
 * Prometheus metrics (prom-client) served at `/metrics`: request counts and latency histograms per
 * operationId and status, pool usage, and whatever gauges a service registers (outbox backlog, punches
 * ingested, live connections). One registry per app, so several apps in one process (tests) never clash.
 */
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
  /** Serves `GET /metrics` in the Prometheus text format. */
  router: Router;
  /** Registers a gauge whose value is read at scrape time. */
  gauge(name: string, help: string, read: () => number | Promise<number>): void;
  /** Registers a counter and returns it (e.g. punches ingested). */
  counter(name: string, help: string): Counter;
}

/** Creates the metrics of a service (`service` becomes a default label) including pool gauges. */
export function createMetrics(service: string, pool: pg.Pool): AppMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests by operation and status', labelNames: ['operation', 'method', 'status'], registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by operation',
    labelNames: ['operation', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const gauge = (name: string, help: string, read: () => number | Promise<number>) => {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(await read());
      },
    });
  };
  gauge('db_pool_connections_total', 'Connections open in the pool', () => pool.totalCount);
  gauge('db_pool_connections_idle', 'Idle connections in the pool', () => pool.idleCount);
  gauge('db_pool_requests_waiting', 'Queries waiting for a connection', () => pool.waitingCount);

  const middleware: RequestHandler = (req, res, next) => {
    const end = process.hrtime.bigint();
    res.on('finish', () => {
      // Unmatched paths are grouped, so scanners cannot blow up the label set.
      const operation = operationOf(req)?.operationId ?? (req.path === '/metrics' ? 'metrics' : 'unmatched');
      requests.inc({ operation, method: req.method, status: String(res.statusCode) });
      duration.observe({ operation, method: req.method }, Number(process.hrtime.bigint() - end) / 1e9);
    });
    next();
  };
  const router = express.Router();
  router.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  return {
    registry,
    middleware,
    router,
    gauge,
    counter: (name, help) => new Counter({ name, help, registers: [registry] }),
  };
}
