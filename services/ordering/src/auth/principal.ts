/**
 * Who is calling the ordering service (docs/decisions.md §6 identity): a user or a registered service client,
 * with roles and the user group that decides shop availability.
 */
import { enumValues } from '@sports-timing/shared';
import type { components } from '../generated/openapi';

/** Roles of the ordering service; staff = admin and support. */
export type Role = components['schemas']['Role'];
export const ROLES = enumValues<Role>({ admin: true, support: true, retailer: true, customer: true });

/** Shop user groups (who may order an article): anonymous callers are `public`. */
export type UserGroup = components['schemas']['UserGroup'];
export const USER_GROUPS = enumValues<UserGroup>({ public: true, retailer: true, internal: true });

/** An authenticated caller, as carried in the access token. */
export interface Principal {
  /** `user` for people (password grant), `client` for service clients (client-credentials grant). */
  kind: 'user' | 'client';
  /** users.id, or the service client's id. */
  id: number;
  /** User name, or client name. */
  name: string;
  roles: Role[];
  userGroup: UserGroup;
  /** ERP customer id of the retailer a retailer user belongs to. */
  erpRetailerEntityId: string | null;
  /** Users: the `token_version` the token was issued at (claim `ver`; 0 when absent). */
  tokenVersion?: number;
}

/** Whether the principal is staff (admin or support). */
export function isStaff(p: Principal | null): boolean {
  return !!p && (p.roles.includes('admin') || p.roles.includes('support'));
}

/** The shop user group of a caller; anonymous and unknown clients are `public` (docs/decisions.md §6). */
export function userGroupOf(p: Principal | null): UserGroup {
  return p?.userGroup ?? 'public';
}
