/**
 * The organisers' command-line tool `punches`: `tail` follows punches live, `replay` uploads a
 * punch file as modems would, `battery` looks up SIAC battery dates. Results go to stdout (or the CSV
 * file), progress and status to stderr.
 */
import { Command, InvalidArgumentError } from 'commander';
import { appendFileSync } from 'node:fs';
import { createTimingClient, type NewPunch } from '@sports-timing/timing-client';
import { batteryLines } from './battery';
import { readPunchFile } from './punch-file';
import { replay } from './replay';
import { localTime, tail } from './tail';

/** Where the commands write; tests pass their own. */
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Aborts long-running commands (SIGINT/SIGTERM in the CLI). */
  signal?: AbortSignal;
}

function positiveNumber(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
}

function modemList(v: string): string[] {
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new InvalidArgumentError('give at least one serial number');
  return list;
}

/**
 * The timing service the commands talk to unless `--url` says otherwise: `TIMING_URL`, else the local service
 * on `TIMING_PORT` (default 8081), so a CLI run beside `pnpm start` on other ports reaches that copy.
 */
export function defaultTimingUrl(env: Record<string, string | undefined> = process.env): string {
  return env.TIMING_URL ?? `http://127.0.0.1:${env.TIMING_PORT ?? 8081}`;
}

/** The ordering service: `ORDERING_URL`, else the local service on `ORDERING_PORT` (default 8080). */
export function defaultOrderingUrl(env: Record<string, string | undefined> = process.env): string {
  return env.ORDERING_URL ?? `http://127.0.0.1:${env.ORDERING_PORT ?? 8080}`;
}

/** Builds the program; `exit` is set when a command fails (exit code). */
function buildProgram(io: CliIo, state: { exit: number }): Command {
  const program = new Command('punches')
    .description('Organisers\' tool for the timing service: follow punches live, replay punch files, look up card batteries.')
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) })
    .exitOverride()
    .showHelpAfterError();

  program
    .command('tail')
    .description('Follow the punches of an event or of modems live (SSE, falling back to long-poll); print them or append CSV rows to a file, resuming after a restart.')
    .option('--event <id>', 'event id')
    .option('--modem <serials>', 'modem serial numbers, comma-separated', modemList)
    .option('--url <url>', 'timing service base URL', defaultTimingUrl())
    .option('--key <key>', 'API key (default: $TIMING_API_KEY; anonymous for public events)', process.env.TIMING_API_KEY)
    .option('--csv <file>', 'append rows (id,card,time,code,type,modem,receptionTimeUtc) to FILE and resume from its last id')
    .option('--state <file>', 'keep the last id in FILE (JSON) and resume from it')
    .option('--after <localMs>', 'only punches with time >= this (local ms) on the first request', positiveNumber)
    .option('--poll', 'long-poll only (no SSE)')
    .option('--timestamps', 'prefix each printed punch with the Unix ms it arrived (for latency measurements)')
    .action(async (o: { event?: string; modem?: string[]; url: string; key?: string; csv?: string; state?: string; after?: number; poll?: boolean; timestamps?: boolean }) => {
      if (o.event === undefined && o.modem === undefined) throw new Error('give --event or --modem');
      const client = createTimingClient({ baseUrl: o.url, apiKey: o.key });
      const lastId = await tail(client, {
        filter: { eventId: o.event, modem: o.modem },
        csvFile: o.csv,
        stateFile: o.state,
        after: o.after,
        pollOnly: o.poll,
        timestamps: o.timestamps,
        signal: io.signal,
        print: io.out,
        status: io.err,
      });
      io.err(`tail: stopped after id ${lastId}`);
    });

  program
    .command('replay')
    .description('Upload a punch file (demo format card,code,time,type or the download CSV) as modems would: in time order at a chosen speed, one modem per control.')
    .argument('<file>', 'punch file (CSV)')
    .option('--modem-prefix <prefix>', 'modem serial = prefix + control code (START/FINISH for start/finish rows); default: the file\'s modem column')
    .option('--speed <factor>', 'event time runs this many times faster than real time', positiveNumber, 60)
    .option('--max-gap <seconds>', 'shorten quiet stretches between punches to this many event seconds', positiveNumber, 60)
    .option('--url <url>', 'timing service base URL', defaultTimingUrl())
    .option('--key <key>', 'API key of the uploading user (default: $TIMING_API_KEY)', process.env.TIMING_API_KEY)
    .option('--ack-log <file>', 'append one line per acknowledged punch: ackUnixMs, then the fields tail prints (card, time, code, type, modem), tab-separated')
    .action(async (file: string, o: { modemPrefix?: string; speed: number; maxGap: number; url: string; key?: string; ackLog?: string }) => {
      if (!o.key) throw new Error('uploads need --key or $TIMING_API_KEY');
      const punches = readPunchFile(file, o.modemPrefix);
      const modems = new Set(punches.map((p) => p.modem)).size;
      io.err(`replay: ${punches.length} punches from ${modems} modems at ${o.speed}x`);
      const ackLog = o.ackLog;
      const onAck = ackLog
        ? (batch: readonly NewPunch[], ackAtMs: number) =>
            appendFileSync(ackLog, batch.map((p) => `${ackAtMs}\t${p.card}\t${localTime(p.time)}\t${p.code}\t${p.type}\t${p.modem}\n`).join(''))
        : undefined;
      const onRejected = (p: NewPunch, reason: string) => io.err(`rejected: card ${p.card} code ${p.code} ${p.type} modem ${p.modem} at ${localTime(p.time)}: ${reason}`);
      const r = await replay(createTimingClient({ baseUrl: o.url, apiKey: o.key }), punches, { speed: o.speed, maxGapMs: o.maxGap * 1000, signal: io.signal, progress: io.err, onAck, onRejected });
      io.out(`sent ${r.sent}, stored ${r.stored}, duplicates ${r.duplicates}, rejected ${r.rejected}`);
      // Rejected punches are invalid data in the file: the replay goes on, but the run is not a clean one.
      if (r.rejected > 0) state.exit = 1;
    });

  program
    .command('battery')
    .description('Battery date and replace-before date of SIAC cards (ordering service).')
    .argument('<cards...>', 'card numbers')
    .option('--url <url>', 'ordering service base URL', defaultOrderingUrl())
    .action(async (cards: string[], o: { url: string }) => {
      const { lines, failed } = await batteryLines(o.url, cards);
      lines.forEach((l) => io.out(l));
      if (failed > 0) state.exit = 1;
    });
  return program;
}

/** Runs the CLI on `argv` (node, script, args…); resolves with the exit code. */
export async function main(argv: readonly string[], io?: CliIo): Promise<number> {
  const state = { exit: 0 };
  const ac = new AbortController();
  const stop = () => {
    ac.abort();
    // A command that does not wind down after the abort (a stream read that never settles was seen after
    // minutes of tail) must not outlive Ctrl-C / SIGTERM: exit after a 10 s grace anyway.
    if (!io) setTimeout(() => process.exit(state.exit || 130), 10_000).unref();
  };
  const realIo: CliIo = io ?? { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), signal: ac.signal };
  if (!io) {
    // `punches tail | head`: a closed pipe ends the program quietly.
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(0);
    });
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  try {
    await buildProgram(realIo, state).parseAsync([...argv]);
    return state.exit;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number; message?: string };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) return e.exitCode ?? 1;
    realIo.err(`error: ${e.message ?? String(err)}`);
    return 1;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
