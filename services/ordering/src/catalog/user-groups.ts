/**
 * Shop user groups and their hierarchy (docs/decisions.md §6, spec `UserGroup`): `public` < `retailer` < `internal`.
 * An article of group G may be ordered by a caller of group C when rank(G) ≤ rank(C).
 */
import { userGroupOf, type Principal, type UserGroup } from '../auth/principal';

const RANK: Record<UserGroup, number> = { public: 0, retailer: 1, internal: 2 };

/** Whether `group` is a user group name. */
export function isUserGroup(group: string): group is UserGroup {
  return Object.prototype.hasOwnProperty.call(RANK, group);
}

/**
 * The caller's group: anonymous (and unknown service clients) → `public`; with a token, the highest of
 * the token's `userGroup` and the group its roles imply (`retailer` → retailer, `admin`/`support` →
 * internal), so a staff token is never treated as public because its group claim was left at the default.
 */
export function effectiveUserGroup(principal: Principal | null): UserGroup {
  let group: UserGroup = userGroupOf(principal);
  const raise = (g: UserGroup) => {
    if (RANK[g] > RANK[group]) group = g;
  };
  if (principal?.roles.includes('retailer')) raise('retailer');
  if (principal?.roles.includes('admin') || principal?.roles.includes('support')) raise('internal');
  return group;
}

/** Whether a caller of `callerGroup` may order an article of `articleGroup` (unknown groups: never). */
export function isAvailableTo(articleGroup: string, callerGroup: UserGroup): boolean {
  return isUserGroup(articleGroup) && RANK[articleGroup] <= RANK[callerGroup];
}
