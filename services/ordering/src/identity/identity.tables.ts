/**
 * Tables of the identity area (users, roles, service clients, licenses). Mirrors migration 0001.
 */
import type { ColumnType, Generated } from 'kysely';

/** `users`: people who log in. Roles are a subset of admin, support, retailer, customer. */
export interface UsersTable {
  id: Generated<number>;
  /** Unique, case-insensitively. */
  user_name: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  /** Language/culture code for mail and localized answers, e.g. `en`, `de-CH`. */
  culture: ColumnType<string, string | undefined, string>;
  roles: ColumnType<string[], string[] | undefined, string[]>;
  user_group: ColumnType<string, string | undefined, string>;
  erp_retailer_entity_id: string | null;
  is_active: ColumnType<boolean, boolean | undefined, boolean>;
  /** scrypt hash in PHC-like format; null for users who cannot log in with a password. */
  password_hash: string | null;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
}

/** All identity tables. */
export interface IdentityTables {
  users: UsersTable;
}
