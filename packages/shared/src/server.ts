/**
 * HTTP server lifecycle shared by both services: header and request-body timeouts (a pause between two reads
 * of a body, and a total bound that grows with the body's size, so slow links can upload large batches),
 * keep-alive longer than common clients' and balancers' idle time, and a graceful stop that
 * refuses new connections, lets in-flight requests finish (answering them with `Connection: close`),
 * closes idle keep-alive sockets at once, and only then releases resources such as the pool.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { loadProcessConfig } from './config';

/** Options of {@link startHttpServer}. */
export interface ServeOptions {
  port: number;
  host: string;
  logger: Logger;
  /** Longest pause while a request body arrives, ms (408 beyond); default `HTTP_BODY_IDLE_TIMEOUT_MS`. */
  bodyIdleTimeoutMs?: number;
  /**
   * Slowest average rate of a body, bytes/s; default `HTTP_BODY_MIN_BYTES_PER_SECOND`. A body must be complete
   * within the idle timeout plus its `Content-Length` (else the bytes received so far) at this rate (408 beyond).
   */
  bodyMinBytesPerSecond?: number;
  /** Idle keep-alive time of a connection, ms; default `HTTP_KEEP_ALIVE_TIMEOUT_MS` (sent as `Keep-Alive: timeout=N`). */
  keepAliveTimeoutMs?: number;
  /** Deadline for the request headers in ms; default 10 s. */
  headersTimeoutMs?: number;
  /** How long a stop waits for in-flight requests before closing their sockets; default 25 s. */
  shutdownGraceMs?: number;
  /**
   * Longest time a stop keeps accepting connections (answering with `Connection: close`) before closing
   * the listener, in ms; default 1000 (`SHUTDOWN_ACCEPT_MS`). Connections still queued in the kernel when
   * the listener closes are reset, so a busy process first accepts what clients sent before the signal:
   * the listener closes once no connection arrived for 100 ms, or at this limit. 0 closes it at once.
   */
  acceptDrainMs?: number;
  /** Called after the listener is closed and requests drained (close pools here). */
  onStopped?: () => Promise<void>;
}

/** A listening server and its stop function. */
export interface RunningServer {
  server: http.Server;
  /** The bound port (useful with port 0). */
  port: number;
  /** Graceful stop; resolves once everything is closed. Idempotent. */
  stop(): Promise<void>;
}

/** Starts listening; resolves once bound. */
export async function startHttpServer(handler: http.RequestListener, opts: ServeOptions): Promise<RunningServer> {
  const processConfig = loadProcessConfig();
  const headersTimeout = opts.headersTimeoutMs ?? 10_000;
  const server = http.createServer(
    {
      // No whole-request deadline: a large upload over a slow link is bounded by watchBody below instead.
      requestTimeout: 0,
      headersTimeout,
      // Longer than the idle time of common clients and balancers (60 s), so the server is never the side that
      // closes a connection a client is about to reuse (the client would see ECONNRESET). Node announces it as
      // `Keep-Alive: timeout=N` on every keep-alive answer.
      keepAliveTimeout: opts.keepAliveTimeoutMs ?? processConfig.httpKeepAliveTimeoutMs,
      // Node checks the header timeout only at this interval (default 30 s): check often enough to honour it.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4))),
    },
    handler,
  );
  const bodyLimits = {
    idleMs: opts.bodyIdleTimeoutMs ?? processConfig.httpBodyIdleTimeoutMs,
    minBytesPerSecond: opts.bodyMinBytesPerSecond ?? processConfig.httpBodyMinBytesPerSecond,
  };
  let stopping = false;
  // Per-connection state for the drain: a connection is closed while stopping only when it is idle after
  // at least one answered request (keep-alive), or never sent a complete request within the grace below.
  // Node's closeIdleConnections() would also reset connections that were accepted but whose first request
  // is still arriving, failing requests the client sent before the signal.
  const connections = new Map<import('node:net').Socket, { busy: number; served: number; since: number }>();
  let lastConnectionAt = 0;
  server.on('connection', (socket) => {
    lastConnectionAt = Date.now();
    connections.set(socket, { busy: 0, served: 0, since: Date.now() });
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (req, res) => {
    if (stopping) res.setHeader('Connection', 'close');
    watchBody(req, res, bodyLimits);
    const state = connections.get(req.socket);
    if (!state) return;
    state.busy++;
    res.once('close', () => {
      state.busy--;
      state.served++;
      state.since = Date.now();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      opts.logger.info('stopping: draining in-flight requests');
      const acceptMs = opts.acceptDrainMs ?? loadProcessConfig().shutdownAcceptMs;
      const stopAt = Date.now();
      const drainUntil = stopAt + acceptMs;
      // Accept until 100 ms passed without a new connection, counted from the signal at the earliest: a busy
      // process may not yet have accepted what clients sent just before it, and each round first lets the poll
      // phase accept what the kernel has queued, so the listener never closes on a queue it did not look at.
      for (;;) {
        await new Promise((r) => setImmediate(r));
        if (Date.now() >= drainUntil || Date.now() - Math.max(lastConnectionAt, stopAt) >= 100) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const fresh = opts.headersTimeoutMs ?? 10_000;
      const closeIdle = () => {
        const now = Date.now();
        for (const [socket, c] of connections) if (c.busy === 0 && (c.served > 0 || now - c.since > Math.min(fresh, 2_000))) socket.destroy();
      };
      closeIdle();
      // Keep-alive sockets become idle as their last response ends; sweep them until the server is closed.
      const sweep = setInterval(closeIdle, 50);
      const deadline = setTimeout(() => server.closeAllConnections(), opts.shutdownGraceMs ?? 25_000);
      await closed;
      clearInterval(sweep);
      clearTimeout(deadline);
      await opts.onStopped?.();
      opts.logger.info('stopped');
    })();
    return stopped;
  };
  return { server, port, stop };
}

/**
 * Bounds the arrival of `req`'s body (README "Configuration", `HTTP_BODY_IDLE_TIMEOUT_MS`,
 * `HTTP_BODY_MIN_BYTES_PER_SECOND`): 408 problem+json and the connection closed when no byte arrived for
 * `idleMs`, or when the body is not complete within `idleMs` plus its size (`Content-Length`, else the bytes
 * received so far) at `minBytesPerSecond`. Reads only the socket's byte count, never the body itself.
 */
function watchBody(req: http.IncomingMessage, res: http.ServerResponse, limits: { idleMs: number; minBytesPerSecond: number }): void {
  const length = Number(req.headers['content-length'] ?? 0);
  if (req.complete || (!(length > 0) && req.headers['transfer-encoding'] === undefined)) return;
  const socket = req.socket;
  const started = Date.now();
  const startBytes = socket.bytesRead;
  let lastBytes = startBytes;
  let lastAt = started;
  const timer = setInterval(
    () => {
      const now = Date.now();
      if (socket.bytesRead !== lastBytes) {
        lastBytes = socket.bytesRead;
        lastAt = now;
      }
      const size = length > 0 ? length : lastBytes - startBytes;
      const idle = now - lastAt > limits.idleMs;
      const late = now - started > limits.idleMs + (size * 1000) / limits.minBytesPerSecond;
      if (!idle && !late) return;
      done();
      if (!res.headersSent) {
        const detail = idle ? 'The request body stopped arriving.' : 'The request body arrives too slowly.';
        res.writeHead(408, { 'Content-Type': 'application/problem+json; charset=utf-8', Connection: 'close' });
        res.end(JSON.stringify({ type: 'https://httpstatuses.io/408', title: 'Request Timeout', status: 408, detail }));
      }
      res.once('finish', () => socket.destroy());
      if (res.writableFinished) socket.destroy();
    },
    Math.max(50, Math.min(1_000, Math.floor(limits.idleMs / 4))),
  );
  timer.unref();
  const done = () => clearInterval(timer);
  req.once('end', done);
  req.once('close', done);
  res.once('close', done);
}

/**
 * Calls `stop` on SIGTERM/SIGINT once — or when the launching process disappears (IPC channel closed, see
 * `pnpm start`) — then exits with 0 (or 1 if stopping failed).
 */
export function stopOnSignals(stop: () => Promise<void>, logger: Logger): void {
  let once = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (once) return;
    once = true;
    // Whatever happens while stopping (a hung close, a log pipe gone with the launcher), exit in the end.
    setTimeout(() => process.exit(1), 30_000).unref();
    logger.info({ signal }, 'signal received');
    stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  if (process.send) {
    process.stdout.on('error', () => undefined);
    process.stderr.on('error', () => undefined);
    process.on('disconnect', () => onSignal('SIGTERM'));
  }
}
