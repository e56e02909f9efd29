/**
 * `@sports-timing/erp-simulator`: a weclapp-style ERP over real HTTP for development (`pnpm start`) and
 * tests, with its demo seed (stable article and customer numbers, attribute keys).
 */
export * from './simulator';
export * from './seed';
export { /** @internal */ ARTICLE_NUMBERS, /** @internal */ SEED_ARTICLES } from './seed-catalogue';
export { /** @internal */ CUSTOMER_NUMBERS } from './seed-accounts';
export * from './types';
export type { /** @internal */ SimRequestsAnswer } from '@sports-timing/shared/src/sim-server';
