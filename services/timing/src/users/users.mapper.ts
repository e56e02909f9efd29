/**
 * Rows → API shapes of users and keys (spec components User, ApiKey).
 */
import type { components } from '../generated/openapi';
import type { ApiKeyRow, UserRow } from './users.repository';

/** API `User`. */
export type UserDto = components['schemas']['User'];
/** API `ApiKey` (never the secret). */
export type ApiKeyDto = components['schemas']['ApiKey'];
/** API `ApiKeyCreated` (the one response that shows the secret). */
export type ApiKeyCreatedDto = components['schemas']['ApiKeyCreated'];

/** A user row as `User`. */
export function toUserDto(row: UserRow): UserDto {
  return { id: row.id, userName: row.user_name, role: row.role, createdAt: row.created_at.toISOString() };
}

/** A key row as `ApiKey`. */
export function toApiKeyDto(row: ApiKeyRow): ApiKeyDto {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}
