/**
 * The organisers' command-line tool `punches`: `tail` follows punches live, `replay` uploads a
 * punch file as modems would, `battery` looks up SIAC battery dates. Results go to stdout (or the CSV
 * file), progress and status to stderr.
 */
import { Command, InvalidArgumentError } from 'commander';
import { appendFileSync } from 'node:fs';
import { createTimingClient, PUNCH_FIELDS, type NewPunch } from '@sports-timing/timing-client';
import { batteryLines } from './battery';
import { readPunchFile } from './punch-file';
import { replay } from './replay';
import { localTime, tail } from './tail';

/** Where the commands write; tests pass their own. */
interface CliIo {
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
  const list = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) throw new InvalidArgumentError('give at least one serial number');
  return list;
}

function integerAtLeast(min: number): (v: string) => number {
  return (v) => {
    if (!/^\d+$/.test(v) || Number(v) < min) throw new InvalidArgumentError(`must be an integer of at least ${min}`);
    return Number(v);
  };
}

/** An http(s) base address, or the reason it is none (`what` names the option or variable). */
function checkedBaseUrl(value: string, what: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${what}: not an address: ${value} (expected e.g. http://127.0.0.1:8081)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${what}: not an http(s) address: ${value}`);
  return value.replace(/\/+$/, '');
}

function checkedPort(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 65535) throw new Error(`${name}: not a port (1-65535): ${v}`);
  return Number(v);
}

/**
 * The timing service the commands talk to unless `--url` says otherwise: `TIMING_URL`, else the local service
 * on `TIMING_PORT` (default 8081), so a CLI run beside `pnpm start` on other ports reaches that copy. Throws
 * an error naming the variable when it cannot be an address (`TIMING_PORT=abc`).
 * @internal
 */
export function defaultTimingUrl(env: Record<string, string | undefined> = process.env): string {
  if (env.TIMING_URL) return checkedBaseUrl(env.TIMING_URL, 'TIMING_URL');
  return `http://127.0.0.1:${checkedPort(env, 'TIMING_PORT', 8081)}`;
}

/** The ordering service: `ORDERING_URL`, else the local service on `ORDERING_PORT` (default 8080); errors as {@link defaultTimingUrl}. @internal */
export function defaultOrderingUrl(env: Record<string, string | undefined> = process.env): string {
  if (env.ORDERING_URL) return checkedBaseUrl(env.ORDERING_URL, 'ORDERING_URL');
  return `http://127.0.0.1:${checkedPort(env, 'ORDERING_PORT', 8080)}`;
}

/** `--url` when given (checked), else the default from the environment. */
function serviceUrl(given: string | undefined, fallback: () => string): string {
  return given === undefined ? fallback() : checkedBaseUrl(given, '--url');
}

/** An error's message with its cause (`fetch failed: connect ECONNREFUSED 127.0.0.1:8081`). */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause : undefined;
  const causeText = cause?.message ?? '';
  return causeText && !err.message.includes(causeText) ? `${err.message}: ${causeText}` : err.message;
}

/** The local wall-clock time of this machine now, as the API's local-time fields count it (ms "as if UTC"). */
function localWallClockNow(): number {
  const now = new Date();
  return now.getTime() - now.getTimezoneOffset() * 60_000;
}

/** Builds the program; `exit` is set when a command fails (exit code). */
function buildProgram(io: CliIo, state: { exit: number }): Command {
  const program = new Command('punches')
    .description("Organisers' tool for the timing service: follow punches live, replay punch files, look up card batteries.")
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) })
    .exitOverride()
    .showHelpAfterError()
    .addHelpText(
      'after',
      `
Examples:
  pnpm punches tail --event 1                     # follow the demo event live
  pnpm punches replay FILE --modem-base 3000000   # upload a punch file as one modem per control would
  pnpm punches battery 8621484                    # a SIAC card's battery date
  pnpm punches <command> --help                   # each command's options and examples`,
    );

  program
    .command('tail')
    .description(
      'Follow the punches of an event or of modems live (SSE, falling back to long-poll); print them or append CSV rows to a file, resuming after a restart.',
    )
    .option('--event <id>', 'event id')
    .option('--modem <serials>', 'modem serial numbers, comma-separated', modemList)
    .option('--url <url>', 'timing service base URL (default: $TIMING_URL, else http://127.0.0.1:$TIMING_PORT, port 8081)')
    .option('--key <key>', 'API key (default: $TIMING_API_KEY; anonymous for public events)', process.env.TIMING_API_KEY)
    .option('--csv <file>', `append rows (${PUNCH_FIELDS.join(',')}) to FILE and resume from its last id`)
    .option('--state <file>', 'keep the last id in FILE (JSON) and resume from it')
    .option('--after <localMs>', 'only punches with time >= this (local ms) on the first request', positiveNumber)
    .option('--poll', 'long-poll only (no SSE)')
    .option('--timestamps', 'prefix each printed punch with the Unix ms it arrived (for latency measurements)')
    .option('--max <n>', 'stop after N punches (exit 0), e.g. to check a replay from a script', integerAtLeast(1))
    .option('--give-up-after <seconds>', 'exit 1 when the service has been unreachable this long', positiveNumber, 60)
    .addHelpText(
      'after',
      `
Examples:
  pnpm punches tail --event 1                          # the demo event, live, as tab-separated lines
  pnpm punches tail --event 1 --csv event1.csv         # append CSV rows; a restart resumes after the last row
  pnpm punches tail --modem 2020054,2020056 --key "$TIMING_API_KEY"
  pnpm punches tail --event 1 --max 5                  # the first five punches, then exit`,
    )
    .action(
      async (o: {
        event?: string;
        modem?: string[];
        url?: string;
        key?: string;
        csv?: string;
        state?: string;
        after?: number;
        poll?: boolean;
        timestamps?: boolean;
        max?: number;
        giveUpAfter: number;
      }) => {
        if (o.event === undefined && o.modem === undefined) throw new Error('give --event or --modem');
        if (o.event !== undefined && !/^[1-9]\d*$/.test(o.event)) throw new Error(`--event: not an event id (a positive integer): ${o.event}`);
        const baseUrl = serviceUrl(o.url, defaultTimingUrl);
        const client = createTimingClient({ baseUrl, apiKey: o.key });
        const lastId = await tail(client, {
          url: baseUrl,
          filter: { eventId: o.event, modem: o.modem },
          csvFile: o.csv,
          stateFile: o.state,
          after: o.after,
          pollOnly: o.poll,
          timestamps: o.timestamps,
          max: o.max,
          giveUpMs: o.giveUpAfter * 1000,
          signal: io.signal,
          print: io.out,
          status: io.err,
        });
        io.err(`tail: stopped after id ${lastId}`);
      },
    );

  program
    .command('replay')
    .description(
      'Upload a punch file (demo format card,code,time,type or the download CSV) as modems would: in time order at a chosen speed, one modem per control.',
    )
    .argument('<file>', 'punch file (CSV)')
    .option(
      '--modem-base <n>',
      "numeric modem serials, one per control: N + control code (Start rows code 1, Finish rows code 2), as MeOS's modem mode needs them; default: the file's modem column",
      integerAtLeast(1),
    )
    .option(
      '--modem-prefix <prefix>',
      "modem serial = prefix + control code (START/FINISH for start/finish rows); not numeric, so MeOS's modem mode cannot read them",
    )
    .option('--list-modems', 'print the modem serials of the file as a JSON array (for an event\'s "modems") and exit without uploading')
    .option(
      '--now',
      "send each punch with the time it is sent (this machine's local wall clock) instead of the file's: a rehearsal happening now; with --speed 1 at the real pace",
    )
    .option('--speed <factor>', 'event time runs this many times faster than real time', positiveNumber, 60)
    .option('--max-gap <seconds>', 'shorten quiet stretches between punches to this many event seconds', positiveNumber, 60)
    .option('--url <url>', 'timing service base URL (default: $TIMING_URL, else http://127.0.0.1:$TIMING_PORT, port 8081)')
    .option('--key <key>', 'API key of the uploading user (default: $TIMING_API_KEY)', process.env.TIMING_API_KEY)
    .option('--ack-log <file>', 'append one line per acknowledged punch: ackUnixMs, then the fields tail prints (card, time, code, type, modem), tab-separated')
    .addHelpText(
      'after',
      `
Examples:
  pnpm punches replay test/live/fixtures/venotte2020-1900-1905.csv --modem-base 3000000 --list-modems
  pnpm punches replay test/live/fixtures/venotte2020-1900-1905.csv --modem-base 3000000 --key "$TIMING_API_KEY"
  pnpm punches replay services/timing/demo/venotte2020-punches.csv --modem-base 3000000 --now --speed 1 --key "$TIMING_API_KEY"
  pnpm punches replay downloaded.csv --speed 600      # a download (id,card,time,code,type,modem,...) keeps its modems`,
    )
    .action(
      async (
        file: string,
        o: {
          modemBase?: number;
          modemPrefix?: string;
          listModems?: boolean;
          now?: boolean;
          speed: number;
          maxGap: number;
          url?: string;
          key?: string;
          ackLog?: string;
        },
      ) => {
        if (o.modemBase !== undefined && o.modemPrefix !== undefined) throw new Error('give --modem-base or --modem-prefix, not both');
        const punches = readPunchFile(file, { modemBase: o.modemBase, modemPrefix: o.modemPrefix });
        const modemList = [...new Set(punches.map((p) => p.modem))].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
        if (o.listModems) {
          io.out(JSON.stringify(modemList));
          return;
        }
        const url = serviceUrl(o.url, defaultTimingUrl);
        if (!o.key) throw new Error('uploads need --key or $TIMING_API_KEY');
        io.err(`replay: ${punches.length} punches from ${modemList.length} modems at ${o.speed}x to ${url}`);
        const ackLog = o.ackLog;
        const onAck = ackLog
          ? (batch: readonly NewPunch[], ackAtMs: number) =>
              appendFileSync(ackLog, batch.map((p) => `${ackAtMs}\t${p.card}\t${localTime(p.time)}\t${p.code}\t${p.type}\t${p.modem}\n`).join(''))
          : undefined;
        const onRejected = (p: NewPunch, reason: string) =>
          io.err(`rejected: card ${p.card} code ${p.code} ${p.type} modem ${p.modem} at ${localTime(p.time)}: ${reason}`);
        const r = await replay(createTimingClient({ baseUrl: url, apiKey: o.key }), punches, {
          speed: o.speed,
          maxGapMs: o.maxGap * 1000,
          timeAtSend: o.now ? localWallClockNow : undefined,
          signal: io.signal,
          progress: io.err,
          onAck,
          onRejected,
        });
        io.out(`sent ${r.sent}, stored ${r.stored}, duplicates ${r.duplicates}, rejected ${r.rejected}`);
        // Rejected punches are invalid data in the file: the replay goes on, but the run is not a clean one.
        if (r.rejected > 0) state.exit = 1;
      },
    );

  program
    .command('battery')
    .description('Battery date and replace-before date of SIAC cards (ordering service).')
    .argument('<cards...>', 'card numbers')
    .option('--url <url>', 'ordering service base URL (default: $ORDERING_URL, else http://127.0.0.1:$ORDERING_PORT, port 8080)')
    .addHelpText(
      'after',
      `
Examples:
  pnpm punches battery 8621484
  pnpm punches battery 8621484 8000000 --url https://shop.example.org`,
    )
    .action(async (cards: string[], o: { url?: string }) => {
      const { lines, failed } = await batteryLines(serviceUrl(o.url, defaultOrderingUrl), cards);
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
    realIo.err(`error: ${describe(err)}`);
    return 1;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
