/**
 * Fast lanes: a service's hottest plain requests (timing's punch reads and uploads, the shop's
 * article list) served before Express sets the request up — Express's per-request set-up alone costs
 * ≈0.13 ms of CPU on the benchmark machine, its whole pipeline about 1 ms — and answered the way the pipeline
 * would answer them: the same request id, metrics and log line. A lane passes every request it does not
 * serve completely to the pipeline, which then answers it from scratch.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { assignRequestId, httpLogEnabled, logCompletedRequest } from './logging';
import type { AppMetrics } from './metrics';

/** Serves a request, or calls `pipeline` (nothing sent yet) to have the Express app answer it. */
export type FastLane = (req: IncomingMessage, res: ServerResponse, pipeline: () => void) => void;

/** Express's entry point of an app (untyped in @types/express): the app function and `listen` call it. */
interface AppEntry {
  handle(req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void;
}

/** Puts `lane` in front of `app`, before Express touches the request; `app` stays an Express app. */
export function runBeforeExpress(app: Express, lane: FastLane): void {
  const entry = app as unknown as AppEntry;
  const expressHandle = entry.handle.bind(app);
  entry.handle = (req, res, next) => lane(req, res, () => expressHandle(req, res, next));
}

/** What a lane records its answers with: the app's metrics and logger. */
export interface FastLaneRecorder {
  metrics: AppMetrics;
  logger: Logger;
}

/**
 * Sends a 200 with `headers` and `body` and records it as the pipeline would: `X-Request-Id`, the request
 * metrics of `operation` (duration from `start`, `process.hrtime.bigint()` at arrival) and, when `HTTP_LOG`
 * is on, the request log line.
 */
export function sendFastLaneAnswer(
  recorder: FastLaneRecorder,
  req: IncomingMessage,
  res: ServerResponse,
  start: bigint,
  operation: string,
  body: string | Buffer,
  headers: Record<string, string | number>,
): void {
  const requestId = assignRequestId(req, res);
  res.writeHead(200, headers);
  res.end(body);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  recorder.metrics.record(operation, req.method ?? '', 200, seconds);
  if (httpLogEnabled()) logCompletedRequest(recorder.logger, req, res, requestId, seconds * 1000);
}
