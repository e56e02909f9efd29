/**
 * Debian's nginx as the shared cache in front of timing instances, run the way infra/README.md "nginx cache"
 * describes: the checked-in `infra/nginx/timing-cache.conf` rendered (listen address, upstream, cache
 * directory) and included from a small nginx.conf whose pid, logs and temporary paths all live in a directory
 * of the run's own, nginx in the foreground as a child process, stopped with SIGQUIT and its directory removed.
 * Binary: `NGINX_BIN` (default `/usr/sbin/nginx`, package nginx-light).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePorts } from '@sports-timing/shared/src/testing';

export const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

/** The checked-in cache configuration (an `http { }`-context file with `${…}` placeholders). */
const CACHE_CONF = path.join(__dirname, '../../infra/nginx/timing-cache.conf');

/** A running nginx. */
export interface NginxCache {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** nginx's stderr so far (configuration errors, crashes). */
  output(): string;
  /**
   * Requests nginx sent to the upstream so far, from its access log (`$upstream_status` set; background cache
   * updates included, as `log_subrequest` is on): what reached the origin, for the bench's championship run.
   */
  originRequests(): number;
  /** The reads among {@link NginxCache.originRequests}: GET and HEAD, streams left out. */
  originPolls(): number;
  /** Requests by `$upstream_cache_status` so far (HIT, MISS, EXPIRED, STALE, UPDATING, REVALIDATED, BYPASS; `-` uncached). */
  cacheStatuses(): Record<string, number>;
  /** SIGQUIT (graceful); resolves once it exited and its directory is removed. */
  stop(): Promise<void>;
}

/** `timing-cache.conf` with its placeholders filled; throws when one is left (the file grew a new one). */
function renderCacheConf(values: Record<string, string>): string {
  const text = readFileSync(CACHE_CONF, 'utf8').replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => values[name] ?? whole);
  const left = /\$\{[A-Z_]+\}/.exec(text);
  if (left) throw new Error(`infra/nginx/timing-cache.conf: no value for ${left[0]}`);
  return text;
}

/** Resolves once `port` accepts connections or the process ended (then rejects with its output). */
async function waitListening(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}:\n${output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts nginx with the checked-in cache configuration in front of `upstream` (`host:port`). The free port can
 * be taken by another process before nginx binds it: then nginx exits and a new port is tried (three times).
 * `workerConnections` (default 1024) counts both sides of every proxied request; `httpDirectives` are added to
 * the `http` block before the checked-in configuration (the benchmark's servers other than ours need some).
 */
export async function startNginxCache(upstream: string, opts: { workerConnections?: number; httpDirectives?: string[] } = {}): Promise<NginxCache> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(upstream, opts.workerConnections ?? 1024, opts.httpDirectives ?? []);
    } catch (err) {
      if (attempt === 3 || !/Address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function startOnce(upstream: string, workerConnections: number, httpDirectives: string[]): Promise<NginxCache> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nginx-cache-'));
  mkdirSync(path.join(dir, 'logs'));
  // nginx cannot listen on port 0 and report it.
  const [port] = await freePorts(1);
  writeFileSync(
    path.join(dir, 'timing-cache.conf'),
    renderCacheConf({ NGINX_LISTEN: `127.0.0.1:${port}`, TIMING_UPSTREAM: upstream, NGINX_CACHE_DIR: path.join(dir, 'cache') }),
  );
  const temp = (name: string) => path.join(dir, `${name}_temp`);
  const conf = [
    // Run as root, the workers would be `nobody` and could not write the 0700 directory (every cached answer a 500).
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    'worker_processes 1;',
    `pid ${path.join(dir, 'nginx.pid')};`,
    `error_log ${path.join(dir, 'logs/error.log')} warn;`,
    `events { worker_connections ${workerConnections}; }`,
    'http {',
    `  client_body_temp_path ${temp('client_body')};`,
    `  proxy_temp_path ${temp('proxy')};`,
    `  fastcgi_temp_path ${temp('fastcgi')};`,
    `  uwsgi_temp_path ${temp('uwsgi')};`,
    `  scgi_temp_path ${temp('scgi')};`,
    // One line per request, its upstream status `-` when nothing went upstream (a cache hit); subrequests
    // (background cache updates) are logged too, so every request that reached the origin is a line.
    "  log_format origin '$upstream_status $upstream_cache_status $status $request_method $uri';",
    '  log_subrequest on;',
    `  access_log ${path.join(dir, 'logs/access.log')} origin;`,
    ...httpDirectives.map((d) => `  ${d}`),
    `  include ${path.join(dir, 'timing-cache.conf')};`,
    '}',
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const child = spawn(NGINX_BIN, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const output = () => stderr;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitListening(port, child, output);
  } catch (err) {
    await stop();
    throw err;
  }
  const lines = () =>
    readFileSync(path.join(dir, 'logs/access.log'), 'utf8')
      .split('\n')
      .filter((line) => line.length > 0);
  const originRequests = () => lines().filter((line) => !line.startsWith('- ')).length;
  const originPolls = () =>
    lines().filter((line) => {
      const [upstream, , , method, uri] = line.split(' ');
      return upstream !== '-' && (method === 'GET' || method === 'HEAD') && !uri.endsWith('/stream');
    }).length;
  const cacheStatuses = () => {
    const counts: Record<string, number> = {};
    for (const line of lines()) {
      const status = line.split(' ')[1] ?? '-';
      counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  };
  return { url: `http://127.0.0.1:${port}`, output, originRequests, originPolls, cacheStatuses, stop };
}
