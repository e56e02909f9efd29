/**
 * The raw typed client of the timing API (openapi-fetch over the `paths` of specs/timing.yaml), apart from the
 * Node-only helpers of index.ts so that a browser bundle (the timing service's console and live page) can use
 * it: only `fetch`.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '@sports-timing/contracts/src/generated/timing';

/** Options of {@link createTimingApi}. */
export interface TimingApiOptions {
  /** e.g. `http://127.0.0.1:8081`; `''` in a page served by the service itself (same origin). */
  baseUrl: string;
  /** API key (header `apikey`); anonymous without. */
  apiKey?: string;
  /** Custom fetch (tests). */
  fetch?: (input: Request) => Promise<Response>;
}

/** Every operation of the spec, typed; errors come back as the `error` member (the ProblemDetails body). */
export function createTimingApi(opts: TimingApiOptions): Client<paths> {
  return createClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    headers: opts.apiKey ? { apikey: opts.apiKey } : {},
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}
