/**
 * Tables of the identity area (users, refresh tokens, service clients, licenses). Mirrors migration 0001.
 */
import type { ColumnType, Generated } from 'kysely';

/** `users`: people who log in. Roles are a subset of admin, support, retailer, customer. */
export interface UsersTable {
  id: Generated<number>;
  /** Unique, case-insensitively. */
  user_name: string;
  /** Unique, case-insensitively. */
  email: string;
  email_verified: ColumnType<boolean, boolean | undefined, boolean>;
  first_name: string | null;
  last_name: string | null;
  /** Language/culture code for mail and localized answers, e.g. `en`, `de-CH`. */
  culture: ColumnType<string, string | undefined, string>;
  roles: ColumnType<string[], string[] | undefined, string[]>;
  user_group: ColumnType<string, string | undefined, string>;
  erp_retailer_entity_id: string | null;
  is_active: ColumnType<boolean, boolean | undefined, boolean>;
  /** scrypt hash in PHC-like format (see identity/passwords.ts); null for users who cannot log in with a password. */
  password_hash: string | null;
  /** Last successful password login (UTC). */
  last_login_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  /** Raised by every role, password or active-flag change; access tokens carry it as `ver` and older ones are refused. */
  token_version: ColumnType<number, number | undefined, number>;
}

/** `email_verifications`: pending e-mail changes, each confirmed by a mailed single-use token. */
interface EmailVerificationsTable {
  id: Generated<number>;
  user_id: number;
  /** The address the user asked for; it replaces `users.email` only when the token is presented. */
  email: string;
  /** SHA-256 hex of the token text. */
  token_hash: string;
  created_at: ColumnType<Date, Date | undefined, never>;
  expires_at: Date;
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** `refresh_tokens`: single-use refresh tokens, stored as SHA-256 hex of the token text. */
export interface RefreshTokensTable {
  id: Generated<number>;
  token_hash: string;
  /** All rotations of one login share a family; reuse of a spent token revokes the family. */
  family_id: string;
  user_id: number;
  scope: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  expires_at: Date;
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** `service_clients`: registered machine clients (client-credentials grant and `X-Service-Client-Id`). */
export interface ServiceClientsTable {
  id: Generated<number>;
  name: string;
  /** Public client id (`client_id` of the client-credentials grant). */
  client_id: string;
  /** SHA-256 hex of the client secret. */
  secret_hash: string;
  /** SHA-256 hex of the `X-Service-Client-Id` identifier; null when the client has none. */
  identifier_hash: string | null;
  roles: ColumnType<string[], string[] | undefined, string[]>;
  user_group: ColumnType<string, string | undefined, string>;
  is_active: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** `licenses`: licenses of licensed products; free while `email` is null. */
export interface LicensesTable {
  /** Random UUID. */
  id: string;
  /** Creation order. */
  seq: Generated<number>;
  product: string;
  /** SHA-256 hex of the license secret's UTF-8 text. */
  secret_hash: string;
  email: string | null;
  assigned_at: Date | null;
  /** Last issued license key. */
  license_key: string | null;
  key_issued_at: Date | null;
  /** Number of keys issued (part of the outbox dedupe key of each key e-mail). */
  keys_issued: ColumnType<number, number | undefined, number>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** All identity tables. */
export interface IdentityTables {
  users: UsersTable;
  refresh_tokens: RefreshTokensTable;
  service_clients: ServiceClientsTable;
  licenses: LicensesTable;
  email_verifications: EmailVerificationsTable;
}
