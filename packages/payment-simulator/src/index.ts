/**
 * `@sports-timing/payment-simulator`: a Payrexx-style payment provider over real HTTP for development
 * (`pnpm start`) and tests: paylinks, gateways, transactions, payouts, status webhooks with retries and chaos.
 */
export * from './simulator';
export * from './types';
