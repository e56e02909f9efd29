/**
 * `DEMO_LIVE=<speed> pnpm start`: the demo event replayed live, shifted to now, so the live page shows modems
 * sending and punches arriving. The real VeNotte 2020 file (`services/timing/demo/venotte2020-punches.csv`) is
 * uploaded by the organisers' CLI (`punches replay --now`) at `speed` × its real pace (1 = as it happened; quiet
 * stretches over a minute shortened to one), each punch stamped with the local time it is sent, into the public
 * event "VeNotte 2020 (live replay)" with its own modems (`2120000 + control code`, apart from the demo
 * event's `2020000 + code`). Each start moves the event's window to begin now, so the page shows only this
 * run's punches. README "Configuration" (`DEMO_LIVE`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '../../..');
const CLI = path.join(root, 'packages/cli/bin/punches.cjs');
const FILE = path.join(root, 'services/timing/demo/venotte2020-punches.csv');
/** Name of the live replay's event. */
const EVENT_NAME = 'VeNotte 2020 (live replay)';
/** Modem serials of the live replay: base + control code (the demo event uses 2020000). */
const MODEM_BASE = 2_120_000;

/**
 * `DEMO_LIVE` as a replay speed: unset or empty → undefined (no live demo); otherwise a positive number, else an
 * Error naming the variable.
 */
export function liveDemoSpeed(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const speed = Number(value);
  if (!Number.isFinite(speed) || speed <= 0) throw new Error(`DEMO_LIVE: not a replay speed (a positive number, 1 = real pace): ${value}`);
  return speed;
}

function runCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`punches ${args[0]} failed: ${err.trim()}`))));
  });
}

async function waitReady(url: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not become ready`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The local wall-clock time now, as the API's local-time fields count it (ms written as if UTC). */
function localNow(): number {
  const now = new Date();
  return now.getTime() - now.getTimezoneOffset() * 60_000;
}

/**
 * Waits for the timing service at `timingUrl`, creates or re-windows the live replay's event with the admin key
 * (`TIMING_BOOTSTRAP_API_KEY`, else `<dataDir>/keys/timing-admin-api-key`), and starts the replay as a child
 * process (its output goes to `log`). Resolves with the child and the live page's address; throws when the
 * service never becomes ready or refuses the event.
 */
export async function startLiveDemo(o: {
  timingUrl: string;
  dataDir: string;
  speed: number;
  env: NodeJS.ProcessEnv;
}): Promise<{ child: ChildProcess; page: string }> {
  await waitReady(o.timingUrl, Date.now() + 120_000);
  const keyFile = path.join(o.dataDir, 'keys', 'timing-admin-api-key');
  const key = o.env.TIMING_BOOTSTRAP_API_KEY ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined);
  if (!key) throw new Error(`DEMO_LIVE: no admin key (TIMING_BOOTSTRAP_API_KEY unset and ${keyFile} missing)`);
  const modems = JSON.parse(await runCli(['replay', FILE, '--modem-base', String(MODEM_BASE), '--list-modems'])) as string[];
  const headers = { apikey: key, 'Content-Type': 'application/json' };
  const events = (await (await fetch(`${o.timingUrl}/api/rest/v1/events`, { headers })).json()) as {
    id: number;
    name: string;
  }[];
  const body = JSON.stringify({ name: EVENT_NAME, public: true, modems, from: localNow() - 60_000, to: null });
  const existing = events.find((e) => e.name === EVENT_NAME);
  const res = existing
    ? await fetch(`${o.timingUrl}/api/rest/v1/events/${existing.id}`, { method: 'PUT', headers, body })
    : await fetch(`${o.timingUrl}/api/rest/v1/events`, { method: 'POST', headers, body });
  if (!res.ok) throw new Error(`DEMO_LIVE: the timing service refused the live replay's event: ${res.status} ${await res.text()}`);
  const event = (await res.json()) as { id: number };
  const child = spawn(
    process.execPath,
    [CLI, 'replay', FILE, '--modem-base', String(MODEM_BASE), '--now', '--speed', String(o.speed), '--max-gap', '60', '--url', o.timingUrl, '--key', key],
    { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return { child, page: `${o.timingUrl}/events/${event.id}/live` };
}
