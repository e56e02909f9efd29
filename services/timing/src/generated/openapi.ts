/**
 * The timing API's types (`paths`, `components`, `operations`), re-exported so the service's modules keep one
 * short import. The one generated copy is packages/contracts/src/generated/timing.ts (`pnpm gen` from
 * specs/timing.yaml; `pnpm gen:check` fails on drift), shared with the typed client.
 */
export type * from '@sports-timing/contracts/src/generated/timing';
