/**
 * `@sports-timing/erp-simulator`: a weclapp-style ERP over real HTTP for development (`pnpm start`) and
 * tests, with its demo seed (stable article and customer numbers, attribute keys).
 */
export * from './simulator';
export * from './seed';
export { ARTICLE_NUMBERS, SEED_ARTICLES } from './seed-catalogue';
export { CUSTOMER_NUMBERS } from './seed-accounts';
export * from './types';
export type { SimRequestsAnswer } from '@sports-timing/shared/src/sim-server';
