/**
 * `pnpm start` on race day (README "Start-up"): every start-up clash is one line naming what to change, exit
 * code 1, before anything starts (a running `pnpm start` on the same data, a port another program holds, two
 * services on one port); and a Ctrl-C at each phase of the start (initdb, PostgreSQL's start, services
 * starting, migrations, ready) stops cleanly: exit code 0, no unhandled error or stack trace, and no process of
 * the tree left (its process group, and every process carrying the run's data directory in its environment:
 * the children run in process groups of their own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { freePorts } from '@sports-timing/shared/src/testing';

const root = path.join(__dirname, '..');
type Ports = Record<'pg' | 'ordering' | 'timing' | 'erp' | 'payment', number>;

/** Five distinct free TCP ports, one per port variable of `pnpm start`. */
async function launcherPorts(): Promise<Ports> {
  const [pg, ordering, timing, erp, payment] = await freePorts(5);
  return { pg, ordering, timing, erp, payment };
}

/** A `pnpm start` in its own process group (as a shell runs a foreground job), with everything it prints. */
interface Run {
  child: ChildProcess;
  output(): string;
  exit: Promise<number | null>;
}

function start(dataDir: string, ports: Ports, extra: Record<string, string> = {}): Run {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    EMBEDDED_PG_PORT: String(ports.pg),
    ORDERING_PORT: String(ports.ordering),
    TIMING_PORT: String(ports.timing),
    ERP_SIMULATOR_PORT: String(ports.erp),
    PAYMENT_SIMULATOR_PORT: String(ports.payment),
    DEMO_DATA: 'false',
    COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
    ...extra,
  };
  // The services log as they do for a person (jest's worker id would silence them).
  for (const name of ['DATABASE_URL', 'LOG_FORMAT', 'LOG_LEVEL', 'JEST_WORKER_ID']) delete env[name];
  const child = spawn('pnpm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exit };
}

/** Resolves once the run printed a line matching `re` (bounded by the test's timeout); rejects if it exits first. */
async function waitFor(run: Run, re: RegExp): Promise<void> {
  while (
    !run
      .output()
      .split('\n')
      .some((l) => re.test(l))
  ) {
    if (run.child.exitCode !== null) throw new Error(`pnpm start exited before ${re}:\n${run.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Pids of the processes whose environment holds `DATA_DIR=<dataDir>` (the launcher's whole tree, whatever its group). */
function processesOf(dataDir: string): number[] {
  const needle = Buffer.from(`DATA_DIR=${dataDir}\0`);
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`).includes(needle);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The lines a clash run printed besides pnpm's own (the script it runs, its report of the exit code). */
function ownLines(output: string): string[] {
  return output.split('\n').filter((l) => l.trim() !== '' && !/ELIFECYCLE|^> /.test(l));
}

const dirs: string[] = [];
function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'start-up-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a start-up clash is one line naming what to change, exit code 1, before anything starts', () => {
  let first: Run;
  let firstDir: string;
  let firstPorts: Ports;

  beforeAll(async () => {
    firstDir = dataDir();
    firstPorts = await launcherPorts();
    first = start(firstDir, firstPorts);
    await waitFor(first, /^\[start\] ready in /);
  }, 120_000);

  afterAll(async () => {
    if (first.child.exitCode === null) {
      process.kill(-first.child.pid!, 'SIGINT');
      await first.exit;
    }
  }, 60_000);

  it('a second `pnpm start` on the same data: the running one is named by its pid, with how to stop it or run a second one', async () => {
    const second = start(firstDir, await launcherPorts());
    expect(await second.exit).toBe(1);
    expect(ownLines(second.output())).toEqual([
      `[start] another \`pnpm start\` (pid ${readFileSync(path.join(firstDir, 'launcher.pid'), 'utf8').trim()}) is running on ${firstDir}: ` +
        'stop it (Ctrl-C in its terminal, or `kill ' +
        readFileSync(path.join(firstDir, 'launcher.pid'), 'utf8').trim() +
        '`), or run a second one with its own DATA_DIR, EMBEDDED_PG_PORT, ORDERING_PORT, TIMING_PORT, ERP_SIMULATOR_PORT, PAYMENT_SIMULATOR_PORT',
    ]);
    // The first one is untouched.
    expect((await fetch(`http://127.0.0.1:${firstPorts.timing}/readyz`)).status).toBe(200);
  });

  it("a second `pnpm start` on other data but the first one's ports: one line per taken port, naming its variable", async () => {
    const second = start(dataDir(), firstPorts);
    expect(await second.exit).toBe(1);
    const taken = (variable: string, port: number) =>
      `[start] ${variable}=${port}: 127.0.0.1:${port} is already in use (another \`pnpm start\`, or another program); stop it, or set ${variable} to a free port`;
    expect(ownLines(second.output())).toEqual([
      taken('EMBEDDED_PG_PORT', firstPorts.pg),
      taken('ORDERING_PORT', firstPorts.ordering),
      taken('TIMING_PORT', firstPorts.timing),
      taken('ERP_SIMULATOR_PORT', firstPorts.erp),
      taken('PAYMENT_SIMULATOR_PORT', firstPorts.payment),
    ]);
  });

  it('a port held by another program: its variable is named, the other ports are not', async () => {
    const ports = await launcherPorts();
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(ports.erp, '127.0.0.1', r));
    try {
      const run = start(dataDir(), ports);
      expect(await run.exit).toBe(1);
      expect(ownLines(run.output())).toEqual([
        `[start] ERP_SIMULATOR_PORT=${ports.erp}: 127.0.0.1:${ports.erp} is already in use (another \`pnpm start\`, or another program); stop it, or set ERP_SIMULATOR_PORT to a free port`,
      ]);
    } finally {
      await new Promise((r) => holder.close(r));
    }
  });

  it("two services on one port (TIMING_PORT set to ordering's): named before any port is tried", async () => {
    const ports = await launcherPorts();
    const run = start(dataDir(), { ...ports, timing: ports.ordering });
    expect(await run.exit).toBe(1);
    expect(ownLines(run.output())).toEqual([
      `[start] TIMING_PORT=${ports.ordering} is also ORDERING_PORT: two services cannot share a port; give TIMING_PORT another one`,
    ]);
  });

  it('a misspelt variable (TIMNG_PORT) and an unknown one with a product prefix: a warning with "did you mean", before the clash', async () => {
    const ports = await launcherPorts();
    const run = start(dataDir(), { ...ports, timing: ports.ordering }, { TIMNG_PORT: '9081', TIMING_PORTS: '9082', ORDERING_NONSENSE: '1' });
    expect(await run.exit).toBe(1);
    expect(ownLines(run.output())).toEqual([
      '[start] warning: ORDERING_NONSENSE is not a setting of this product and is ignored (README "Configuration" lists them)',
      '[start] warning: TIMING_PORTS is not a setting of this product and is ignored; did you mean TIMING_PORT?',
      '[start] warning: TIMNG_PORT is not a setting of this product and is ignored; did you mean TIMING_PORT?',
      `[start] TIMING_PORT=${ports.ordering} is also ORDERING_PORT: two services cannot share a port; give TIMING_PORT another one`,
    ]);
  });

  it('a lock file left by a launcher that is gone is no clash (negative control: the port clash after it is reported)', async () => {
    const dir = dataDir();
    // A pid no process has: the highest pid the kernel hands out, plus one.
    writeFileSync(path.join(dir, 'launcher.pid'), `${Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) + 1}\n`);
    const ports = await launcherPorts();
    const run = start(dir, { ...ports, erp: ports.payment });
    expect(await run.exit).toBe(1);
    expect(ownLines(run.output())).toEqual([
      `[start] PAYMENT_SIMULATOR_PORT=${ports.payment} is also ERP_SIMULATOR_PORT: two services cannot share a port; give PAYMENT_SIMULATOR_PORT another one`,
    ]);
  });
});

describe('Ctrl-C at each phase of the start stops cleanly, leaving no process behind', () => {
  const phases: [string, RegExp][] = [
    ['initdb', /^\[start\] initdb: creating the database cluster/],
    ["PostgreSQL's start", /^\[start\] starting PostgreSQL on /],
    ['services starting', /^\[start\] starting erp-sim$/],
    ['migrations', /^\[timing\] .*migrations applied/],
    ['ready', /^\[start\] ready in /],
  ];
  it.each(phases)(
    'Ctrl-C during %s: exit 0, no unhandled error or stack trace, the process group and every child gone',
    async (_phase, line) => {
      const dir = dataDir();
      const run = start(dir, await launcherPorts());
      await waitFor(run, line);
      process.kill(-run.child.pid!, 'SIGINT');
      const code = await run.exit;
      const out = run.output();
      expect(out).not.toMatch(/Unhandled|ERR_IPC_CHANNEL_CLOSED|^\s+at /m);
      // No ERROR, and a database still busy at start is one WARN at most per service, naming what waits.
      expect(out).not.toMatch(/"level":[56]0/);
      for (const name of ['timing', 'ordering', 'erp-sim', 'payment-sim']) {
        const warnings = out.split('\n').filter((l) => l.startsWith(`[${name}] `) && l.includes('"level":40'));
        expect(warnings.length).toBeLessThanOrEqual(1);
      }
      expect(out).toMatch(/\[start\] stopping: services first, then the database[\s\S]*\[start\] stopped/);
      expect(code).toBe(0);
      expect(groupAlive(run.child.pid!)).toBe(false);
      expect(processesOf(dir)).toEqual([]);
    },
    120_000,
  );
});

describe('HOST=0.0.0.0 (README "On the club\'s network")', () => {
  it('the closing lines name loopback and every LAN address of each service, and each of them answers', async () => {
    const dir = dataDir();
    const ports = await launcherPorts();
    const run = start(dir, ports, { HOST: '0.0.0.0' });
    try {
      await waitFor(run, /^\[start\] ready in /);
      const lan = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a !== undefined && !a.internal && a.family === 'IPv4')
        .map((a) => a!.address);
      for (const [name, port, probe] of [
        ['timing', ports.timing, '/readyz'],
        ['ordering', ports.ordering, '/readyz'],
        ['erp-sim', ports.erp, '/'],
        ['payment-sim', ports.payment, '/'],
      ] as const) {
        const line = run
          .output()
          .split('\n')
          .find((l) => l.startsWith(`[start] ${name} `));
        const urls = (line ?? '').split(/\s+/).filter((w) => w.startsWith('http://'));
        expect(urls).toEqual([`http://127.0.0.1:${port}`, ...lan.map((a) => `http://${a}:${port}`)]);
        // Each address is served (any HTTP answer counts for the simulators; the services must be ready).
        for (const url of urls) expect((await fetch(url + probe)).status).toBeLessThan(name.endsWith('-sim') ? 500 : 300);
      }
    } finally {
      process.kill(-run.child.pid!, 'SIGINT');
      expect(await run.exit).toBe(0);
    }
  }, 120_000);
});
