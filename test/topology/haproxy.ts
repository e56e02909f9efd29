/**
 * HAProxy in front of the topology's instances: its configuration (one front end per service, roundrobin,
 * `/readyz` checks, retries on refused connections, a stats page), the process, and HAProxy's view of each
 * server read from the stats page. Binary: `HAPROXY_BIN` (default Debian's `/usr/sbin/haproxy`).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { testTime } from '@sports-timing/shared/src/test-time';

export const HAPROXY_BIN = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy';

/** A server of a back end: its HAProxy name (also sent back as `X-Served-By`) and port on 127.0.0.1. */
interface BalancedServer {
  name: string;
  port: number;
}

/** Where HAProxy listens and what it balances; `ordering` empty leaves out the ordering front end. */
interface BalancerOptions {
  timingPort: number;
  orderingPort: number;
  statsPort: number;
  timing: BalancedServer[];
  ordering: BalancedServer[];
}

/** A running HAProxy. */
export interface Balancer {
  pid: number | undefined;
  /** HAProxy's view of a server: `UP`, `DOWN`, `MAINT`, … (`UP 1/2` while rising counts as not up). */
  serverStatus: (name: string) => Promise<string>;
  /** Resolves once HAProxy reports the server `UP` (throws after `timeoutMs`, default 15 s, with HAProxy's output). */
  waitUp: (name: string, timeoutMs?: number) => Promise<void>;
  /** SIGTERM; resolves once it exited. */
  stop(): Promise<void>;
}

/** The HAProxy configuration: one front end per service, roundrobin, `/readyz` checks, retries on refused connections. */
function haproxyConfig(o: BalancerOptions): string {
  const backend = (name: string, list: BalancedServer[]) =>
    [
      `backend ${name}`,
      '  balance roundrobin',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      // Which instance answered: the scenarios prove that consecutive requests spread over the instances.
      '  http-response set-header X-Served-By %s',
      '  default-server inter 250ms fastinter 100ms downinter 250ms rise 2 fall 3',
      ...list.map((i) => `  server ${i.name} 127.0.0.1:${i.port} check`),
      '',
    ].join('\n');
  return [
    'global',
    '  maxconn 4000',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 1s',
    '  timeout client 90s',
    '  timeout server 90s',
    '  timeout http-keep-alive 10s',
    // Without it a check must answer within `inter`: on a loaded machine a slow /readyz would take an instance
    // (or all of them: HAProxy's own 503) out of the pool although it serves.
    '  timeout check 2s',
    // A refused or reset connection before any byte of the answer is retried on another instance: this
    // covers the moments between an instance's death and its health check failing. A request the instance
    // already received is never re-sent by the balancer (clients retry with Idempotency-Key / re-upload).
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response',
    '  option forwardfor',
    '',
    `frontend timing_in`,
    `  bind 127.0.0.1:${o.timingPort}`,
    '  default_backend timing',
    '',
    ...(o.ordering.length ? [`frontend ordering_in`, `  bind 127.0.0.1:${o.orderingPort}`, '  default_backend ordering', ''] : []),
    'listen stats',
    `  bind 127.0.0.1:${o.statsPort}`,
    '  stats enable',
    '  stats uri /stats',
    '',
    backend('timing', o.timing),
    o.ordering.length ? backend('ordering', o.ordering) : '',
  ].join('\n');
}

/** Writes the configuration to `dir`/haproxy.cfg, checks it (`haproxy -c`) and starts HAProxy in the foreground. */
export function startHaproxy(dir: string, o: BalancerOptions): Balancer {
  const cfg = path.join(dir, 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig(o));
  execFileSync(HAPROXY_BIN, ['-c', '-q', '-f', cfg], { stdio: 'pipe' });
  const haproxy: ChildProcess = spawn(HAPROXY_BIN, ['-db', '-f', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  let haproxyOut = '';
  haproxy.stdout!.on('data', (c: Buffer) => (haproxyOut += c.toString()));
  haproxy.stderr!.on('data', (c: Buffer) => (haproxyOut += c.toString()));
  const serverStatus = async (name: string): Promise<string> => {
    const csv = await (await fetch(`http://127.0.0.1:${o.statsPort}/stats;csv`)).text();
    const header = csv.split('\n')[0].replace(/^# /, '').split(',');
    const col = header.indexOf('status');
    for (const line of csv.split('\n').slice(1)) {
      const f = line.split(',');
      if (f[1] === name) return f[col];
    }
    return 'UNKNOWN';
  };
  const waitUp = async (name: string, timeoutMs = 15_000) => {
    const until = Date.now() + testTime(timeoutMs);
    let last = '';
    while (Date.now() < until) {
      try {
        last = await serverStatus(name);
        if (last === 'UP') return;
      } catch (err) {
        last = (err as Error).message;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`HAProxy server ${name} not UP within ${timeoutMs} ms (last: ${last}); haproxy said:\n${haproxyOut.slice(-2000)}`);
  };
  return {
    pid: haproxy.pid,
    serverStatus,
    waitUp,
    async stop() {
      if (haproxy.exitCode !== null || haproxy.signalCode !== null) return;
      const gone = new Promise((r) => haproxy.once('exit', r));
      haproxy.kill('SIGTERM');
      await gone;
    },
  };
}
