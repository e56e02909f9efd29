/**
 * `pnpm busy [--load N] -- <command …>`: runs a command on a machine kept busy, as a contributor's laptop that is
 * compiling something meanwhile: N child processes (default 8) spin on the CPU at normal priority for as long as the
 * command runs, so the load average stays at N or more on top of the command's own work. Prints the command's
 * wall-clock time and the load averages seen, and exits with the command's exit code.
 *
 * `pnpm busy -- pnpm test` is how CONTRIBUTING.md's "busy" suite time is measured: the suite must pass under it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';

const SPIN = 'for (;;) { Math.sqrt(Math.random()); }';

function parse(argv: string[]): { load: number; command: string[] } {
  const dash = argv.indexOf('--');
  const own = dash < 0 ? [] : argv.slice(0, dash);
  const command = dash < 0 ? argv : argv.slice(dash + 1);
  const i = own.indexOf('--load');
  const load = i < 0 ? 8 : Number(own[i + 1]);
  if (!Number.isInteger(load) || load < 1 || load > 64) throw new Error(`--load takes a whole number from 1 to 64, not ${own[i + 1]}`);
  if (command.length === 0) throw new Error('usage: pnpm busy [--load N] -- <command …>');
  return { load, command };
}

async function main(): Promise<number> {
  const { load, command } = parse(process.argv.slice(2));
  const spinners: ChildProcess[] = Array.from({ length: load }, () => spawn(process.execPath, ['-e', SPIN], { stdio: 'ignore' }));
  const stopSpinners = () => spinners.forEach((s) => s.kill('SIGKILL'));
  process.once('exit', stopSpinners);
  const seen: number[] = [];
  const sampler = setInterval(() => seen.push(os.loadavg()[0]), 10_000);
  const started = Date.now();
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => child.kill(signal));
  const code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 128 : 1))));
  clearInterval(sampler);
  stopSpinners();
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const loads = seen.length > 0 ? `load average ${Math.min(...seen).toFixed(1)}–${Math.max(...seen).toFixed(1)}` : 'no load sample';
  process.stderr.write(
    `[busy] ${command.join(' ')}: exit ${code} after ${minutes} min beside ${load} spinning processes (${loads}, ${os.cpus().length} cores)\n`,
  );
  return code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[busy] ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
