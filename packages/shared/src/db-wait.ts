/**
 * Background work meeting a database that is not there yet or is too busy to hand out a connection (a first
 * start on a busy machine, a PostgreSQL restart): the work is retried at its next turn anyway, so such a
 * failure is one WARN line naming what waits and for what, not an ERROR with a stack trace per attempt
 * (README "Start-up"). Anything else is still the caller's error to log.
 */
import type { Logger } from 'pino';
import { databaseFault } from './db-faults';

/**
 * Whether `err` is database trouble of the moment (db-faults.ts, the one classification both services answer
 * 503 for: the database away or refusing connections, a pool that handed out no connection in time, …) or a
 * connection attempt that timed out.
 */
function transient(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return databaseFault(err) !== undefined || /connection timeout|timeout expired/i.test(message);
}

/**
 * One per background task (hand it down from the composition, never shared through a module): `failed(err)`
 * answers true and logs one WARN for the first transient failure of an outage (`"<what> waits for the
 * database: <reason>; retrying"`), nothing for the next ones; false (nothing logged) for any other error.
 * `succeeded()` ends the outage, logging one INFO line if a WARN was written.
 */
export class DatabaseWait {
  private waiting = false;

  constructor(
    private readonly logger: Logger,
    private readonly what: string,
  ) {}

  failed(err: unknown): boolean {
    if (!transient(err)) return false;
    if (!this.waiting) this.logger.warn({ reason: err instanceof Error ? err.message : String(err) }, `${this.what} waits for the database; retrying`);
    this.waiting = true;
    return true;
  }

  succeeded(): void {
    if (this.waiting) this.logger.info(`${this.what}: the database answers again`);
    this.waiting = false;
  }
}
