/**
 * How a repository lists the calls that render its statements (scripts/sql/ordering.ts, scripts/sql/timing.ts):
 * per exported function, one call with placeholder arguments, or several named calls when the statement text
 * depends on the arguments (an optional filter, an empty list). The calls are type-checked against the
 * functions, so a changed signature fails `pnpm typecheck` until the calls follow it.
 */
import type { Answers, Recording } from './recorder';

/** One call of a repository function against the recording executors. */
export type Call = ((r: Recording) => Promise<unknown>) | { run: (r: Recording) => Promise<unknown>; answers: Answers };

/** A function's rendering: one call, or variant name → call (each variant rendered in turn into the same file). */
export type Rendering = Call | Record<string, Call>;

/** The placeholder instant of Date arguments; a Date parameter at any other instant came from the clock. */
export const PLACEHOLDER_TIME = new Date('2026-01-01T00:00:00.000Z');

/** One repository file and the calls that render it. */
export interface RepositoryStatements {
  /** The repository file, relative to the repository root (`services/<service>/src/<area>/<name>.repository.ts`). */
  file: string;
  /** Names of the module's exported functions. */
  exported: string[];
  /** Exported functions that run no statement themselves (builders of a fragment or of text), and why. */
  helpers: Record<string, string>;
  /** Exported function name → its rendering. */
  calls: Record<string, Rendering>;
}

type FunctionNames<M> = { [K in keyof M]: M[K] extends (...args: never[]) => unknown ? K : never }[keyof M] & string;

/**
 * The statements of repository `file` (module `module`): `calls` renders each function that runs SQL,
 * `helpers` names the others with the reason. Keys are checked against the module's function exports.
 */
export function repository<M extends object>(
  file: string,
  module: M,
  calls: Partial<Record<FunctionNames<M>, Rendering>>,
  helpers: Partial<Record<FunctionNames<M>, string>> = {},
): RepositoryStatements {
  const exported = Object.entries(module)
    .filter(([, v]) => typeof v === 'function')
    .map(([k]) => k)
    .sort();
  return { file, exported, calls: calls as Record<string, Rendering>, helpers: helpers as Record<string, string> };
}
