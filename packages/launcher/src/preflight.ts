/**
 * What `pnpm start` checks before it starts anything (README "Start-up"): another launcher on the same data
 * directory (its lock file), two services on one port, and a port some other program holds. Each clash is one
 * line naming the variable to change, so a club's second start on race day explains itself at once instead of
 * failing inside the database or a service seconds later.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A port the launcher binds or hands to a child: its variable, the address it is bound on, its value. */
export interface PortUse {
  variable: string;
  host: string;
  port: number;
}

/** Name of the launcher's lock file inside `DATA_DIR`: the pid of the running `pnpm start`. */
const LOCK_FILE = 'launcher.pid';

/** The variables a second `pnpm start` next to a first one must change (its own data and ports). */
const SECOND_RUN_VARIABLES = 'DATA_DIR, EMBEDDED_PG_PORT, ORDERING_PORT, TIMING_PORT, ERP_SIMULATOR_PORT, PAYMENT_SIMULATOR_PORT';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the data directory's lock (`$DATA_DIR/launcher.pid`, created exclusively; a file left by a launcher
 * that is gone is replaced). Returns a release function (removes the file if it is still ours), or a one-line
 * clash naming the running launcher's pid, how to stop it and how to run a second one.
 */
export function lockDataDir(dataDir: string): { release: () => void } | { clash: string } {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return {
        release: () => {
          try {
            if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
        return {
          clash:
            `another \`pnpm start\` (pid ${pid}) is running on ${dataDir}: stop it (Ctrl-C in its terminal, or \`kill ${pid}\`), ` +
            `or run a second one with its own ${SECOND_RUN_VARIABLES}`,
        };
      unlinkSync(file); // left by a launcher that is gone (killed hard, machine restarted)
    }
  }
  return { clash: `${file}: cannot take the lock of the data directory` };
}

/** One line per variable whose port another variable of `uses` also names (two services on one port). */
export function duplicatePorts(uses: PortUse[]): string[] {
  const lines: string[] = [];
  for (const [i, use] of uses.entries()) {
    const first = uses.findIndex((u) => u.port === use.port);
    if (first < i)
      lines.push(`${use.variable}=${use.port} is also ${uses[first].variable}: two services cannot share a port; give ${use.variable} another one`);
  }
  return lines;
}

/** Resolves with the bind error's code for `host`:`port`, or undefined when the port could be bound (then released). */
function tryBind(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/**
 * One line per port of `uses` that cannot be bound now (another program holds it, or the address is not this
 * machine's), naming its variable; empty when every port is free.
 */
export async function takenPorts(uses: PortUse[]): Promise<string[]> {
  const results = await Promise.all(uses.map(async (u) => ({ u, code: await tryBind(u.host, u.port) })));
  return results
    .filter((r) => r.code !== undefined)
    .map(({ u, code }) =>
      code === 'EADDRINUSE'
        ? `${u.variable}=${u.port}: ${u.host}:${u.port} is already in use (another \`pnpm start\`, or another program); stop it, or set ${u.variable} to a free port`
        : code === 'EACCES'
          ? `${u.variable}=${u.port}: binding ${u.host}:${u.port} is not permitted (ports below 1024 need privileges); set ${u.variable} to a port above 1023`
          : `${u.variable}=${u.port}: cannot bind ${u.host}:${u.port} (${code}); check HOST and ${u.variable}`,
    );
}

/** Whether `host` means every interface of the machine (`0.0.0.0`, `::`). */
function wildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/** The address a local client (the launcher's own probes, the simulators' callers) reaches a service bound on `host` at. */
export function localAddress(host: string): string {
  return wildcard(host) ? '127.0.0.1' : host;
}

/**
 * The base URLs a service bound on `host`:`port` answers at: the host itself, or for a wildcard loopback and
 * every non-internal address of `os.networkInterfaces()` (IPv6 ones for `::` only, link-local ones left out:
 * they need a zone). Shapes: `http://192.168.1.20:8081`, `http://[2001:db8::5]:8081`.
 */
export function serviceUrls(host: string, port: number): string[] {
  const url = (address: string) => `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  if (!wildcard(host)) return [url(host)];
  const lan = Object.values(os.networkInterfaces())
    .flat()
    .filter((a): a is os.NetworkInterfaceInfo => a !== undefined && !a.internal)
    .filter((a) => a.family === 'IPv4' || (host === '::' && !a.address.toLowerCase().startsWith('fe80')))
    .map((a) => a.address);
  return ['127.0.0.1', ...new Set(lan)].map(url);
}
