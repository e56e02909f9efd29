/**
 * Users (ordering spec §4.6, DESIGN §6 identity): reads with ownership rules, creation by admins,
 * self-service profile changes and administrative role changes. Passwords are hashed here and never leave
 * this module; the `User` DTO never carries the hash.
 */
import { ApiError, validationError, type Database } from '@sports-timing/shared';
import type { Kysely } from 'kysely';
import { isStaff, type Principal, type Role, type UserGroup } from '../auth/principal';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { hashPassword, passwordProblem, verifyPassword } from './passwords';
import { revokeUserRefreshTokens } from './refresh-tokens.repository';
import { isUniqueViolation } from './secrets';
import * as repo from './users.repository';
import type { UserRow } from './users.repository';

/** `User` of the spec. */
export type UserDto = components['schemas']['User'];
/** `NewUser` of the spec. */
export type NewUserDto = components['schemas']['NewUser'];
/** `UpdateProfileRequest` of the spec. */
export type UpdateProfileDto = components['schemas']['UpdateProfileRequest'];
/** `UpdateRolesRequest` of the spec. */
export type UpdateRolesDto = components['schemas']['UpdateRolesRequest'];

/** The spec's `User` of a row (timestamps as RFC 3339 UTC; never the password hash). */
export function toUserDto(row: UserRow): UserDto {
  return {
    id: row.id,
    userName: row.user_name,
    email: row.email,
    emailVerified: row.email_verified,
    firstName: row.first_name,
    lastName: row.last_name,
    culture: row.culture,
    roles: row.roles as Role[],
    userGroup: row.user_group as UserGroup,
    erpRetailerEntityId: row.erp_retailer_entity_id,
    isActive: row.is_active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    lastLoginAt: row.last_login_at ? row.last_login_at.toISOString() : null,
  };
}

/** The principal of a user row (what its access tokens carry). */
export function principalOfUser(row: UserRow): Principal {
  return {
    kind: 'user',
    id: row.id,
    name: row.user_name,
    roles: row.roles as Role[],
    userGroup: row.user_group as UserGroup,
    erpRetailerEntityId: row.erp_retailer_entity_id,
  };
}

/** The user group a user gets when none is given: staff internal, retailers retailer, others public. */
export function defaultUserGroup(roles: readonly Role[]): UserGroup {
  if (roles.includes('admin') || roles.includes('support')) return 'internal';
  if (roles.includes('retailer')) return 'retailer';
  return 'public';
}

/** A retailer must be in the retailer group and linked to an ERP customer (spec `createUser`, `updateUserRoles`). */
function checkRetailerLink(roles: readonly string[], userGroup: string, link: string | null): void {
  if (!roles.includes('retailer')) return;
  const errors: Record<string, string[]> = {};
  if (userGroup !== 'retailer') errors.userGroup = ['must be "retailer" for a user with role retailer'];
  if (!link) errors.erpRetailerEntityId = ['is required for a user with role retailer'];
  if (Object.keys(errors).length) throw validationError(errors);
}

function conflictOnDuplicate(err: unknown): never {
  if (isUniqueViolation(err, 'users_user_name_key')) throw new ApiError(409, 'The user name is already taken.');
  if (isUniqueViolation(err, 'users_email_key')) throw new ApiError(409, 'The e-mail address is already used by another user.');
  throw err;
}

const notFound = () => new ApiError(404, 'No such user.');

/** Callbacks the users service notifies (the access check caches `is_active`). */
export interface UsersServiceHooks {
  /** A user's active flag or credentials changed. */
  onUserChanged(userId: number): void;
}

/** Users of the ordering service. */
export class UsersService {
  constructor(
    private readonly database: Database<DB>,
    private readonly hooks: UsersServiceHooks,
  ) {}

  private get db(): Kysely<DB> {
    return this.database.db;
  }

  /** A user by id: staff see all; others only themselves (404 for anyone else, as for a missing id). */
  async get(caller: Principal, id: number): Promise<UserDto> {
    if (!isStaff(caller) && !(caller.kind === 'user' && caller.id === id)) throw notFound();
    const row = await repo.findUserById(this.db, id);
    if (!row) throw notFound();
    return toUserDto(row);
  }

  /** A user by user name (case-insensitive), with the same visibility as {@link get}. */
  async getByName(caller: Principal, userName: string): Promise<UserDto> {
    const row = await repo.findUserByName(this.db, userName);
    if (!row || (!isStaff(caller) && !(caller.kind === 'user' && caller.id === row.id))) throw notFound();
    return toUserDto(row);
  }

  /** All users by user name (staff only, enforced by the spec's `x-roles`). */
  async list(): Promise<UserDto[]> {
    return (await repo.listUsers(this.db)).map(toUserDto);
  }

  /** Creates a user (admin); 400 on policy violations, 409 on a taken user name or e-mail. */
  async create(input: NewUserDto): Promise<UserDto> {
    const problem = passwordProblem(input.password, input.userName);
    if (problem) throw validationError({ password: [problem] });
    const roles = (input.roles ?? ['customer']) as Role[];
    const userGroup = input.userGroup ?? defaultUserGroup(roles);
    const link = input.erpRetailerEntityId ?? null;
    checkRetailerLink(roles, userGroup, link);
    const passwordHash = await hashPassword(input.password);
    try {
      const row = await repo.insertUser(this.db, {
        user_name: input.userName,
        email: input.email,
        first_name: input.firstName ?? null,
        last_name: input.lastName ?? null,
        culture: input.culture ?? 'en',
        roles,
        user_group: userGroup,
        erp_retailer_entity_id: link,
        is_active: input.isActive ?? true,
        password_hash: passwordHash,
      });
      return toUserDto(row);
    } catch (err) {
      return conflictOnDuplicate(err);
    }
  }

  /**
   * Changes the caller's own profile (never another user's: the user is taken from the token). A new
   * password needs the current one; it revokes the user's refresh tokens (other sessions end).
   */
  async updateProfile(caller: Principal, input: UpdateProfileDto): Promise<UserDto> {
    if (caller.kind !== 'user') throw new ApiError(403, 'Service clients have no profile.');
    const current = await repo.findUserById(this.db, caller.id);
    if (!current) throw notFound();
    let passwordHash: string | undefined;
    if (input.newPassword !== undefined) {
      if (input.currentPassword === undefined) throw validationError({ currentPassword: ['is required to change the password'] });
      if (!(await verifyPassword(input.currentPassword, current.password_hash))) throw validationError({ currentPassword: ['is not correct'] });
      const problem = passwordProblem(input.newPassword, current.user_name);
      if (problem) throw validationError({ newPassword: [problem] });
      passwordHash = await hashPassword(input.newPassword);
    } else if (input.currentPassword !== undefined) {
      throw validationError({ currentPassword: ['is only used together with newPassword'] });
    }
    const emailChanged = input.email !== undefined && input.email.toLowerCase() !== current.email.toLowerCase();
    try {
      const row = await this.db.transaction().execute(async (trx) => {
        const updated = await repo.updateUser(trx, caller.id, {
          ...(input.email !== undefined ? { email: input.email } : {}),
          ...(emailChanged ? { email_verified: false } : {}),
          ...(input.firstName !== undefined ? { first_name: input.firstName } : {}),
          ...(input.lastName !== undefined ? { last_name: input.lastName } : {}),
          ...(input.culture !== undefined ? { culture: input.culture } : {}),
          ...(passwordHash ? { password_hash: passwordHash } : {}),
        });
        if (!updated) throw notFound();
        if (passwordHash) await revokeUserRefreshTokens(trx, caller.id);
        return updated;
      });
      if (passwordHash) this.hooks.onUserChanged(caller.id);
      return toUserDto(row);
    } catch (err) {
      return conflictOnDuplicate(err);
    }
  }

  /**
   * Changes roles, user group, retailer link and active flag of a user (admin). 409 when no active admin
   * would remain: the active admins are locked first, so concurrent demotions serialize. Deactivation
   * revokes the user's refresh tokens; access tokens are refused from then on (see `AccessCheck`).
   */
  async updateRoles(input: UpdateRolesDto): Promise<UserDto> {
    const row = await this.db.transaction().execute(async (trx) => {
      const admins = await repo.lockActiveAdmins(trx);
      const target = await repo.lockUser(trx, input.id);
      if (!target) throw notFound();
      const roles = input.roles as Role[];
      const userGroup = input.userGroup ?? target.user_group;
      const link = input.erpRetailerEntityId !== undefined ? input.erpRetailerEntityId : target.erp_retailer_entity_id;
      const isActive = input.isActive ?? target.is_active;
      checkRetailerLink(roles, userGroup, link);
      const staysAdmin = isActive && roles.includes('admin');
      if (!staysAdmin && admins.includes(target.id) && admins.length === 1) {
        throw new ApiError(409, 'This change would leave no active admin.');
      }
      const updated = await repo.updateUser(trx, target.id, { roles, user_group: userGroup, erp_retailer_entity_id: link, is_active: isActive });
      if (!isActive) await revokeUserRefreshTokens(trx, target.id);
      return updated!;
    });
    this.hooks.onUserChanged(row.id);
    return toUserDto(row);
  }

  /**
   * Creates the bootstrap `admin` (roles [admin], group internal) when the users table is empty; returns
   * whether it did. Two instances starting together: the unique user name makes the second insert a no-op.
   */
  async bootstrapAdmin(password: string, email = 'admin@localhost.invalid'): Promise<boolean> {
    if (await repo.anyUserExists(this.db)) return false;
    const passwordHash = await hashPassword(password);
    try {
      await repo.insertUser(this.db, { user_name: 'admin', email, roles: ['admin'], user_group: 'internal', password_hash: passwordHash, email_verified: true });
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }
}
