/**
 * The command line of `pnpm bench` (run.ts has the usage): the run's options with their defaults, parsed
 * from the arguments and `BENCH_DATABASE_URL`.
 */
import path from 'node:path';
import type { RunOptions } from './results';
import { ROOT } from './servers';

/** Default database of the benchmark (never the tests' database). */
const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/bench';

/** Options of {@link runBench}. */
export interface BenchOptions extends RunOptions {
  /** Where BENCHMARKS.md goes (null: not written). */
  reportPath: string | null;
  /** Directory of the JSON results (null: not written). */
  resultsDir: string | null;
  log?: (msg: string) => void;
}

function usage(): string {
  return 'usage: pnpm bench [--scale 1] [--duration 8] [--rounds 3] [--warmup 2] [--only|--scenario id|group,…] [--servers name,…] [--database-url URL] [--tsx] [--report FILE] [--results-dir DIR] | --render RESULTS.json [--report FILE]';
}

/** A comma-separated option value as its non-empty items. */
const list = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Parses the command line (see the module comment). Throws with a usage line on bad input. */
export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const o: BenchOptions = {
    scale: 1,
    durationSeconds: 8,
    rounds: 3,
    warmupSeconds: 2,
    only: [],
    databaseUrl: env.BENCH_DATABASE_URL ?? DEFAULT_DATABASE_URL,
    runMode: 'compiled',
    reportPath: path.join(ROOT, 'BENCHMARKS.md'),
    resultsDir: path.join(ROOT, 'bench/results'),
  };
  const num = (name: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < min) throw new Error(`${name} needs a number ≥ ${min}\n${usage()}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--scale':
        o.scale = num(flag, value(), 0.00001);
        break;
      case '--duration':
        o.durationSeconds = num(flag, value(), 1);
        break;
      case '--rounds':
        o.rounds = Math.round(num(flag, value(), 1));
        break;
      case '--warmup':
        o.warmupSeconds = num(flag, value(), 0);
        break;
      case '--only':
      case '--scenario':
        o.only = list(value());
        break;
      case '--servers':
        o.servers = list(value());
        break;
      case '--database-url':
        o.databaseUrl = value() ?? '';
        break;
      case '--report':
        o.reportPath = path.resolve(value() ?? '');
        break;
      case '--results-dir':
        o.resultsDir = path.resolve(value() ?? '');
        break;
      case '--tsx':
        o.runMode = 'tsx';
        break;
      case '--':
        break;
      default:
        throw new Error(`unknown option ${argv[i]}\n${usage()}`);
    }
  }
  return o;
}
