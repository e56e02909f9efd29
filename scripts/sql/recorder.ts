/**
 * Executors that run nothing: a Kysely instance whose driver records every compiled statement, and a pg pool
 * stand-in that records every `query` call. `pnpm sql` (scripts/sql-render.ts) calls the repository functions
 * with them to capture the statements exactly as the functions build them, without a database and without
 * the repositories exposing their queries in any other way (docs/database.md "Checked-in SQL").
 */
import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { DB as OrderingDB } from '../../services/ordering/src/db/schema';
import type { DB as TimingDB } from '../../services/timing/src/db/schema';

/** One statement a repository function ran: its text and its parameter values in `$n` order. */
export interface RecordedStatement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * What the recorded statements answer, in order of execution; when the list is used up, each statement answers
 * one {@link anything} row (so that `executeTakeFirstOrThrow`, "found" branches and the mapping of the answer
 * go on). A function that reads a column of the answer to decide what it runs next is given the rows.
 */
export type Answers = Record<string, unknown>[][];

/**
 * A value that stands in for any column of any row: every property and every call is itself again, it
 * iterates as empty, and it converts to 0 or '' (so `row.created_at.toISOString()`, `rows.map(...)` and
 * `Number(row.n)` all go on). It is truthy, which is why a loop on an answer needs explicit answers.
 */
const anything: unknown = new Proxy(function anything() {}, {
  get: (_target, key) => {
    if (key === Symbol.iterator) return function* () {};
    if (key === Symbol.toPrimitive) return (hint: string) => (hint === 'number' ? 0 : '');
    if (key === 'then') return undefined; // not a promise
    if (key === 'toJSON') return () => null;
    return anything;
  },
  apply: () => anything,
});

/** Whether `v` is the stand-in value of an unanswered row (a parameter taken from an earlier answer). */
export function isAnswerStandIn(v: unknown): boolean {
  return v === anything;
}

/** Most statements one call may run before the recording refuses (see {@link Answers}). */
const MAX_STATEMENTS = 20;

/** The executors of one recording, and what they recorded. */
export interface Recording {
  /** Kysely over the recording driver, typed to stand in for either service's `Kysely<DB>`. */
  db: Kysely<OrderingDB> & Kysely<TimingDB>;
  /**
   * A stand-in for a pg pool (and the clients its `connect()` gives) that records every `query`; callers cast
   * it to the pool type of the function they call (this workspace root does not depend on pg).
   */
  pool: { query: (config: string | { text: string; values?: unknown[] }, values?: unknown[]) => Promise<unknown>; connect: () => Promise<unknown> };
  /** The statements recorded so far, in order. */
  statements: RecordedStatement[];
}

/** A recording whose statements answer `answers` in turn (see {@link Answers}). */
export function startRecording(answers: Answers = []): Recording {
  const statements: RecordedStatement[] = [];
  const queue = [...answers];
  const answer = (): Record<string, unknown>[] => queue.shift() ?? [anything as Record<string, unknown>];
  const record = (sql: string, parameters: readonly unknown[]): void => {
    // A function that loops until an answer tells it to stop would never end here.
    if (statements.length >= MAX_STATEMENTS) throw new Error(`more than ${MAX_STATEMENTS} statements: give the call answers that end its loop`);
    statements.push({ sql, parameters });
  };
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      record(query.sql, query.parameters);
      const rows = answer() as R[];
      return { rows, numAffectedRows: BigInt(rows.length) };
    },
    // eslint-disable-next-line require-yield
    async *streamQuery() {
      throw new Error('the statement recorder does not stream');
    },
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: async () => record('begin', []),
    commitTransaction: async () => record('commit', []),
    rollbackTransaction: async () => record('rollback', []),
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  const db = new Kysely<unknown>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  // pg's `query(text, values)` and `query({ text, values, name })` forms, the ones the repositories use.
  const query = async (config: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
    const text = typeof config === 'string' ? config : config.text;
    const params = typeof config === 'string' ? values : (config.values ?? values);
    record(text, params ?? []);
    const rows = answer();
    return { rows, rowCount: rows.length, command: '', oid: 0, fields: [] };
  };
  const client = { query, release: () => undefined };
  const pool = { query, connect: async () => client };
  // Table types only matter to the compiler; one recording instance serves the calls of both services.
  return { db: db as unknown as Recording['db'], pool, statements };
}
