/**
 * Tables of the identity area (users, roles, service clients, licenses). Mirrors migration 0001.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface IdentityTables {}
