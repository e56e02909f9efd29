/**
 * Users (ordering spec §4.6, docs/decisions.md §6 identity): reads with ownership rules, creation by admins,
 * self-service profile changes and administrative role changes. Passwords are hashed here and never leave
 * this module; the `User` DTO never carries the hash.
 */
import { ApiError, consumeOrThrow, specFilled, validationError, type Database } from '@sports-timing/shared';
import type { Kysely } from 'kysely';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { isStaff, type Principal, type Role, type UserGroup } from '../auth/principal';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { enqueueMail } from '../outbox/outbox.service';
import type { HashGate } from './hash-gate';
import { accountKeyOf, type LoginLimiter } from './login-limits';
import { hashPassword, passwordProblem, verifyPassword } from './passwords';
import { revokeUserRefreshTokens } from './refresh-tokens.repository';
import { isUniqueViolation, randomSecret, sha256Hex } from './secrets';
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
/** `VerifyEmailRequest` of the spec. */
export type VerifyEmailDto = components['schemas']['VerifyEmailRequest'];

/** Lifetime of an e-mail verification token: 24 hours. */
const EMAIL_VERIFICATION_TTL_SECONDS = 24 * 3600;

/** The spec's `User` of a row (timestamps as RFC 3339 UTC; never the password hash). */
function toUserDto(row: UserRow): UserDto {
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
    tokenVersion: row.token_version,
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

/** What the users service needs besides the database. */
export interface UsersServiceOptions {
  /** The password-attempt limits shared with the token endpoint (current-password checks count as attempts). */
  limiter: LoginLimiter;
  /** Bounds concurrent password hashing. */
  hashing: HashGate;
  /** Limits verification mails per user (self-service e-mail changes). */
  verificationMailLimiter: RateLimiterAbstract;
  /** Base URL of this service, named in verification mails. */
  publicBaseUrl: string;
}

/** Users of the ordering service. */
export class UsersService {
  constructor(
    private readonly database: Database<DB>,
    private readonly opts: UsersServiceOptions,
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
    // Defaults of NewUser, filled in by the request validator (spec as the single source).
    const roles = specFilled(input.roles, 'NewUser roles');
    const userGroup = input.userGroup ?? defaultUserGroup(roles);
    const link = input.erpRetailerEntityId ?? null;
    checkRetailerLink(roles, userGroup, link);
    const passwordHash = await this.opts.hashing.run(() => hashPassword(input.password));
    try {
      const row = await repo.insertUser(this.db, {
        user_name: input.userName,
        email: input.email,
        first_name: input.firstName ?? null,
        last_name: input.lastName ?? null,
        culture: specFilled(input.culture, 'NewUser culture'),
        roles,
        user_group: userGroup,
        erp_retailer_entity_id: link,
        is_active: specFilled(input.isActive, 'NewUser isActive'),
        password_hash: passwordHash,
      });
      return toUserDto(row);
    } catch (err) {
      return conflictOnDuplicate(err);
    }
  }

  /**
   * Changes the caller's own profile (never another user's: the user is taken from the token); `ip` is the
   * caller's address. A new password needs the current one, whose check counts as a password attempt of
   * the account (the token endpoint's limits: 429 with `Retry-After` over them; 503 when hashing is busy);
   * it raises the token version (every access token of the user, this one included, is refused from then
   * on) and revokes the refresh tokens. A new e-mail address is not applied: it gets a verification mail
   * (see {@link verifyEmail}), or, when another account already has it, a mail saying so; the answer is
   * the same in both cases and shows the unchanged address. Sending one for the current, unverified
   * address asks for its verification. 429 over the verification-mail limit.
   */
  async updateProfile(caller: Principal, input: UpdateProfileDto, ip: string): Promise<UserDto> {
    if (caller.kind !== 'user') throw new ApiError(403, 'Service clients have no profile.');
    const current = await repo.findUserById(this.db, caller.id);
    if (!current) throw notFound();
    let passwordHash: string | undefined;
    if (input.newPassword !== undefined) {
      if (input.currentPassword === undefined) throw validationError({ currentPassword: ['is required to change the password'] });
      const problem = passwordProblem(input.newPassword, current.user_name);
      if (problem) throw validationError({ newPassword: [problem] });
      await this.checkCurrentPassword(current, input.currentPassword, ip);
      passwordHash = await this.opts.hashing.run(() => hashPassword(input.newPassword!));
    } else if (input.currentPassword !== undefined) {
      throw validationError({ currentPassword: ['is only used together with newPassword'] });
    }
    const newEmail = input.email?.trim();
    const sameAddress = newEmail !== undefined && newEmail.toLowerCase() === current.email.toLowerCase();
    const verificationWanted = newEmail !== undefined && (!sameAddress || !current.email_verified);
    if (verificationWanted)
      await consumeOrThrow(this.opts.verificationMailLimiter, `user:${current.id}`, 'Too many e-mail verification requests; retry later.');
    const row = await this.db.transaction().execute(async (trx) => {
      const updated = await repo.updateUser(
        trx,
        caller.id,
        {
          // A change of case only is the same address: applied at once, verification state unchanged.
          ...(sameAddress ? { email: newEmail } : {}),
          ...(input.firstName !== undefined ? { first_name: input.firstName } : {}),
          ...(input.lastName !== undefined ? { last_name: input.lastName } : {}),
          ...(input.culture !== undefined ? { culture: input.culture } : {}),
          ...(passwordHash ? { password_hash: passwordHash } : {}),
        },
        { bumpTokenVersion: !!passwordHash },
      );
      if (!updated) throw notFound();
      if (passwordHash) await revokeUserRefreshTokens(trx, caller.id);
      if (verificationWanted) await this.requestVerification(trx, updated, newEmail);
      return updated;
    });
    return toUserDto(row);
  }

  /**
   * Checks `password` against the user's current one as one attempt of the account (limits shared with
   * the token endpoint). Throws ApiError 429 over the limits, 503 when hashing is busy, 400
   * (`errors.currentPassword`) when it is wrong.
   */
  private async checkCurrentPassword(user: UserRow, password: string, ip: string): Promise<void> {
    const attempt = await this.opts.limiter.reserve(accountKeyOf(user.id, user.user_name), ip);
    let ok: boolean;
    try {
      ok = await this.opts.hashing.run(() => verifyPassword(password, user.password_hash));
    } catch (err) {
      await attempt.release();
      throw err;
    }
    if (!ok) {
      attempt.failed();
      throw validationError({ currentPassword: ['is not correct'] });
    }
    await attempt.succeeded();
  }

  /**
   * Stores a verification token for `email` and mails it there, in the caller's transaction; when another
   * user has the address, mails that instead (nothing is stored), so the answer cannot tell the two apart.
   */
  private async requestVerification(trx: Kysely<DB>, user: UserRow, email: string): Promise<void> {
    const requestId = randomSecret();
    if (await repo.emailTakenByOther(trx, email, user.id)) {
      await enqueueMail(trx, `email-verification:${requestId}`, {
        to: email,
        subject: 'This e-mail address already has an account',
        language: 'en',
        text: [
          'Hello,',
          '',
          'someone asked to use this e-mail address for a shop account, but it already belongs to an account.',
          'Nothing was changed. If this was you, sign in with that account instead (its user name or this address).',
          'If it was not you, you can ignore this message.',
        ].join('\n'),
      });
      return;
    }
    const token = randomSecret('ev_');
    await repo.replaceEmailVerification(trx, {
      userId: user.id,
      email,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(Date.now() + EMAIL_VERIFICATION_TTL_SECONDS * 1000),
    });
    await enqueueMail(trx, `email-verification:${requestId}`, {
      to: email,
      subject: 'Confirm your e-mail address',
      language: 'en',
      text: [
        `Hello ${user.first_name ?? user.user_name},`,
        '',
        'please confirm that this is your e-mail address for your shop account. Your verification code:',
        '',
        token,
        '',
        `Enter it where you changed your address, or send it as {"token": "<code>"} to ${this.opts.publicBaseUrl}/api/rest/v1/users/verify-email.`,
        `The code is valid for ${EMAIL_VERIFICATION_TTL_SECONDS / 3600} hours and can be used once. Until then your account keeps its previous address.`,
        'If you did not ask for this, you can ignore this message.',
      ].join('\n'),
    });
  }

  /**
   * Confirms an e-mail address with the token of a verification mail: the address becomes the user's
   * (verified) address. 400 (`errors.token`) for an unknown, spent or expired token; 409 when another
   * user has taken the address in the meantime (the token stays usable then).
   */
  async verifyEmail(input: VerifyEmailDto): Promise<UserDto> {
    const invalid = () => validationError({ token: ['is unknown, used or expired'] });
    try {
      return await this.db.transaction().execute(async (trx) => {
        const spent = await repo.spendEmailVerification(trx, sha256Hex(input.token));
        if (!spent) throw invalid();
        const updated = await repo.updateUser(trx, spent.user_id, { email: spent.email, email_verified: true });
        if (!updated) throw invalid();
        return toUserDto(updated);
      });
    } catch (err) {
      if (isUniqueViolation(err, 'users_email_key')) throw new ApiError(409, 'The e-mail address now belongs to another account.');
      throw err;
    }
  }

  /**
   * Changes roles, user group, retailer link and active flag of a user (admin). 409 when no active admin
   * would remain: the active admins are locked first, so concurrent demotions serialize. Deactivation
   * revokes the user's refresh tokens. Every change raises the token version, so the user's access tokens
   * issued before it are refused at once (see `AccessCheck`): new roles need a new login.
   */
  async updateRoles(input: UpdateRolesDto): Promise<UserDto> {
    const row = await this.db.transaction().execute(async (trx) => {
      const admins = await repo.lockActiveAdmins(trx);
      const target = await repo.lockUser(trx, input.id);
      if (!target) throw notFound();
      const roles = input.roles;
      const userGroup = input.userGroup ?? target.user_group;
      const link = input.erpRetailerEntityId !== undefined ? input.erpRetailerEntityId : target.erp_retailer_entity_id;
      const isActive = input.isActive ?? target.is_active;
      checkRetailerLink(roles, userGroup, link);
      const staysAdmin = isActive && roles.includes('admin');
      if (!staysAdmin && admins.includes(target.id) && admins.length === 1) {
        throw new ApiError(409, 'This change would leave no active admin.');
      }
      const updated = await repo.updateUser(
        trx,
        target.id,
        { roles, user_group: userGroup, erp_retailer_entity_id: link, is_active: isActive },
        { bumpTokenVersion: true },
      );
      if (!isActive) await revokeUserRefreshTokens(trx, target.id);
      return updated!;
    });
    return toUserDto(row);
  }
}

/**
 * Creates the bootstrap `admin` (roles [admin], group internal, verified address) when the users table
 * is empty; returns whether it did. Two instances starting together: the unique user name makes the
 * second insert a no-op.
 */
export async function createBootstrapAdmin(db: Kysely<DB>, password: string, email = 'admin@localhost.invalid'): Promise<boolean> {
  if (await repo.anyUserExists(db)) return false;
  const passwordHash = await hashPassword(password);
  try {
    await repo.insertUser(db, { user_name: 'admin', email, roles: ['admin'], user_group: 'internal', password_hash: passwordHash, email_verified: true });
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}
