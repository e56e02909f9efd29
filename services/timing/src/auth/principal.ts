/**
 * The caller of a request, as established from its `apikey` header (security scheme `apiKey`; docs/decisions.md §5).
 */
import type { HasRoles } from '@sports-timing/shared';

/** User roles of the timing service. */
export type Role = 'admin' | 'user';

/** An authenticated caller: the key's user. `roles` holds the single role, for spec `x-roles` checks. */
export interface Principal extends HasRoles {
  userId: number;
  userName: string;
  role: Role;
  /** The API key used (0 for internal callers such as the demo loader). */
  keyId: number;
}

/** Whether the caller is an admin (null = anonymous). */
export function isAdmin(p: Principal | null): boolean {
  return p?.role === 'admin';
}

/** A principal for internal callers (start-up tasks) acting as a user without a key. */
export function internalPrincipal(userId: number, userName: string, role: Role): Principal {
  return { userId, userName, role, keyId: 0, roles: [role] };
}
