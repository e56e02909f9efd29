/**
 * Which database errors are trouble of the moment rather than a defect (docs/database.md "Database faults"):
 * the database away, read-only (a fail-over target, `default_transaction_read_only`), out of disk, memory or
 * connection slots, a lock or statement timeout, the pool's connections all in use. Both services answer
 * them 503 with `Retry-After` through the one error mapping of `errors.ts`; the pool (`db.ts`) discards a
 * session whose error says it cannot be used again, and readiness (`health.ts`) reads the same verdict.
 */

/** What kind of trouble a {@link DatabaseFault} is. */
type DatabaseFaultKind = 'unavailable' | 'read-only' | 'disk-full' | 'resources' | 'connections' | 'lock-timeout' | 'statement-timeout' | 'busy';

/** A database error classified: the answer to give (detail, `Retry-After` seconds) and what it says of the session. */
export interface DatabaseFault {
  kind: DatabaseFaultKind;
  /** The ProblemDetails `detail` / Status `message` (never the driver's text). */
  detail: string;
  /** `Retry-After`, seconds. */
  retryAfterSeconds: number;
  /**
   * The pooled session the error came from must not be reused: it is gone (shutdown, connection lost) or it
   * is attached to a server that cannot write (read-only after a fail-over; a fresh session finds the writable one).
   */
  sessionUnusable: boolean;
  /** The instance itself is fine and only busy (no database trouble): logged as a rejection, not as an error. */
  overload: boolean;
}

/** Driver and socket codes of a connection that cannot be used (not SQLSTATEs). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

const UNAVAILABLE: Omit<DatabaseFault, 'kind'> = {
  detail: 'The database is unavailable; retry shortly.',
  retryAfterSeconds: 2,
  sessionUnusable: true,
  overload: false,
};

/**
 * Classifies `err` (a node-postgres error with `code` = SQLSTATE, a socket error, pg-pool's checkout
 * timeout); undefined for anything else, which stays a 500. SQLSTATEs: 25006 read_only_sql_transaction,
 * 53100 disk_full, 53300 too_many_connections, other 53xxx insufficient resources, 55P03 lock_not_available
 * (`lock_timeout`), 57014 query_canceled (`statement_timeout`), 57P01–57P03 shutdown / cannot connect now,
 * 25P03 idle-in-transaction timeout, class 08 connection exceptions.
 */
export function databaseFault(err: unknown): DatabaseFault | undefined {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  if (message === 'timeout exceeded when trying to connect')
    // pg-pool's connectionTimeoutMillis ran out in its queue: every pooled connection stayed busy.
    return { kind: 'busy', detail: 'The service is busy; retry shortly.', retryAfterSeconds: 1, sessionUnusable: false, overload: true };
  switch (code) {
    case '25006':
      return {
        kind: 'read-only',
        detail: 'The database accepts no writes at the moment (read-only); retry shortly.',
        retryAfterSeconds: 5,
        sessionUnusable: true,
        overload: false,
      };
    case '53100':
      return { kind: 'disk-full', detail: 'The database is out of disk space; retry later.', retryAfterSeconds: 30, sessionUnusable: false, overload: false };
    case '53300':
      return {
        kind: 'connections',
        detail: 'The database has no free connection; retry shortly.',
        retryAfterSeconds: 2,
        sessionUnusable: true,
        overload: false,
      };
    case '55P03':
      return {
        kind: 'lock-timeout',
        detail: 'The data is locked by other work; retry shortly.',
        retryAfterSeconds: 1,
        sessionUnusable: false,
        overload: false,
      };
    case '57014':
      return { kind: 'statement-timeout', detail: 'The database took too long; retry shortly.', retryAfterSeconds: 2, sessionUnusable: false, overload: false };
    case '57P01':
    case '57P02':
    case '57P03':
    case '25P03':
      return { kind: 'unavailable', ...UNAVAILABLE };
  }
  if (code.startsWith('53'))
    return { kind: 'resources', detail: 'The database is short of resources; retry shortly.', retryAfterSeconds: 5, sessionUnusable: false, overload: false };
  if (code.startsWith('08') || SOCKET_CODES.has(code)) return { kind: 'unavailable', ...UNAVAILABLE };
  if (/Connection terminated|Client has encountered a connection error|terminating connection|Connection ended unexpectedly/i.test(message))
    return { kind: 'unavailable', ...UNAVAILABLE };
  return undefined;
}
