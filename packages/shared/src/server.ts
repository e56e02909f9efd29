/**
 * HTTP server lifecycle shared by both services: request/header timeouts, and a graceful stop that
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
  /** Whole-request deadline in ms (slow bodies get 408); default 30 s. */
  requestTimeoutMs?: number;
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
  const requestTimeout = opts.requestTimeoutMs ?? 30_000;
  const server = http.createServer(
    {
      requestTimeout,
      headersTimeout: opts.headersTimeoutMs ?? 10_000,
      keepAliveTimeout: 5_000,
      // Node checks the timeouts only at this interval (default 30 s): check often enough to honour them.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(requestTimeout / 4))),
    },
    handler,
  );
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
