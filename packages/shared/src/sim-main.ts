/**
 * The `pnpm start` entry both simulators share (`packages/erp-simulator/src/main.ts`,
 * `packages/payment-simulator/src/main.ts`): the control token's start-up rule before anything listens
 * (`controlTokenFromEnv`), `HOST` (default 127.0.0.1), a logger, webhook subscriptions from comma lists, the
 * start, one line saying where it listens, and a graceful stop on SIGTERM/SIGINT. A failure to start prints
 * the error (a configuration mistake as its one line) and ends the process with status 1.
 */
import { appEnvironmentFromEnv, checkHost, ConfigError, envReader, isDeployment, parseUrlList } from './config';
import { createLogger } from './logging';
import { stopOnSignals } from './server';

/**
 * The control token of a simulator's process from its environment (`SIM_CONTROL_TOKEN`). Outside development
 * (`APP_ENV=staging` or `production`) a simulator refuses to start without one: its control API
 * pays, refunds and fails on command, which no shared deployment may leave open (README "What production
 * changes"). Throws a ConfigError naming the variable.
 * @internal
 */
export function controlTokenFromEnv(env: Record<string, string | undefined> = process.env): string | undefined {
  const token = env.SIM_CONTROL_TOKEN?.trim() || undefined;
  const appEnv = appEnvironmentFromEnv(env);
  if (token === undefined && isDeployment(appEnv)) {
    throw new ConfigError('SIM_CONTROL_TOKEN', '', `a token when APP_ENV=${appEnv}: the control API must not run without a credential outside development`);
  }
  if (token !== undefined && token.length < 16) throw new ConfigError('SIM_CONTROL_TOKEN', '***', 'a token of at least 16 characters');
  return token;
}

/** The environment reader the simulators read their settings with. */
type Env = ReturnType<typeof envReader>;

/** What every simulator is given, whatever it simulates. */
export interface SimulatorBasics {
  env: Env;
  /** `HOST`, default 127.0.0.1. */
  host: string;
  log: (line: string) => void;
  /** From `SIM_CONTROL_TOKEN`; undefined → the control API serves loopback clients only. */
  controlToken: string | undefined;
  /** The entries of the comma list of http(s) URLs in variable `name` (trimmed, empty ones dropped); throws ConfigError. */
  list: (name: string) => string[];
}

/** A simulator's own part of its entry. */
export interface SimulatorEntry<S extends { start(): Promise<unknown>; stop(): Promise<void> }> {
  /** Logger name, e.g. `erp-simulator`. */
  name: string;
  /** Said in the start line, e.g. `ERP simulator`. */
  label: string;
  /** Builds the simulator (not started) and subscribes its webhook URLs. */
  create(basics: SimulatorBasics): S;
  /** Where it listens and with what credentials, for the start line (development values only). */
  describe(sim: S, basics: SimulatorBasics): Record<string, unknown>;
}

/** Runs a simulator's `pnpm start` entry (see the module comment). */
export function runSimulator<S extends { start(): Promise<unknown>; stop(): Promise<void> }>(entry: SimulatorEntry<S>): void {
  const run = async () => {
    const env = envReader();
    // Before anything listens: outside development no control API without a token.
    const controlToken = controlTokenFromEnv();
    const logger = createLogger(entry.name);
    // Webhook lists and HOST are checked like the services' settings: a bad one is one line naming it.
    const list = (name: string) => parseUrlList(name, env.string(name, ''));
    const host = checkHost('HOST', env.string('HOST', '127.0.0.1')!);
    const basics: SimulatorBasics = { env, host, log: (line) => logger.info(line), controlToken, list };
    const sim = entry.create(basics);
    await sim.start();
    stopOnSignals(() => sim.stop(), logger);
    logger.info(entry.describe(sim, basics), `${entry.label} listening (control API under /__control: ${controlToken ? 'X-Control-Token' : 'loopback only'})`);
  };
  run().catch((err) => {
    // A configuration mistake is one line naming its variable (README "Configuration"); anything else keeps its stack.
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  });
}
