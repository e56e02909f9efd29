/**
 * Registered service clients (ordering spec: `users/service-clients`, `X-Service-Client-Id`): machine
 * clients with a client secret for the client-credentials grant and, optionally, an identifier sent as
 * `X-Service-Client-Id` on shop operations and the battery lookup. Both are random 256-bit values stored
 * as SHA-256 hashes; an unknown identifier means "anonymous", never an error.
 */
import { randomBytes } from 'node:crypto';
import { ApiError, type Database } from '@sports-timing/shared';
import type { Role, UserGroup } from '../auth/principal';
import type { DB } from '../db/schema';
import type { components } from '../generated/openapi';
import { isUniqueViolation, randomSecret, sha256Hex } from './secrets';
import * as repo from './service-clients.repository';
import type { ServiceClientRow } from './service-clients.repository';
import { defaultUserGroup } from './users.service';

/** `ServiceClient` of the spec. */
export type ServiceClientDto = components['schemas']['ServiceClient'];
/** `NewServiceClient` of the spec. */
export type NewServiceClientDto = components['schemas']['NewServiceClient'];
/** `NewServiceClientReply` of the spec. */
export type NewServiceClientReplyDto = components['schemas']['NewServiceClientReply'];

/** A client recognised by its `X-Service-Client-Id` (kept in `res.locals.serviceClient` for logs/metrics). */
export interface IdentifiedServiceClient {
  id: number;
  name: string;
}

function toDto(row: ServiceClientRow): ServiceClientDto {
  return {
    id: row.id,
    name: row.name,
    clientId: row.client_id,
    roles: row.roles as Role[],
    userGroup: row.user_group as UserGroup,
    hasIdentifier: row.identifier_hash !== null,
    isActive: row.is_active,
    createdAt: row.created_at.toISOString(),
  };
}

/** How long an identifier lookup is cached (ms): clients send it on every shop request. */
const IDENTIFIER_CACHE_MS = 60_000;
const IDENTIFIER_CACHE_MAX = 10_000;

/** Service clients. */
export class ServiceClientsService {
  private readonly identifierCache = new Map<string, { client: IdentifiedServiceClient | null; until: number }>();

  constructor(private readonly database: Database<DB>) {}

  /** Registers a client and returns its one-time secrets; 409 on a taken name. */
  async create(input: NewServiceClientDto): Promise<NewServiceClientReplyDto> {
    const roles = input.roles ?? [];
    const clientSecret = randomSecret();
    const identifier = input.withIdentifier === false ? null : randomSecret();
    try {
      const row = await repo.insertServiceClient(this.database.db, {
        name: input.name,
        client_id: `sc_${randomBytes(12).toString('hex')}`,
        secret_hash: sha256Hex(clientSecret),
        identifier_hash: identifier ? sha256Hex(identifier) : null,
        roles,
        user_group: input.userGroup ?? defaultUserGroup(roles),
      });
      return { client: toDto(row), clientSecret, identifier };
    } catch (err) {
      if (isUniqueViolation(err, 'service_clients_name_key')) throw new ApiError(409, 'A service client with this name exists.');
      throw err;
    }
  }

  /** All clients by name. */
  async list(): Promise<ServiceClientDto[]> {
    return (await repo.listServiceClients(this.database.db)).map(toDto);
  }

  /**
   * The active client an `X-Service-Client-Id` value designates, or null (unknown identifiers are
   * anonymous). Lookups, hits and misses alike, are cached for a minute per instance.
   */
  async identify(identifier: string): Promise<IdentifiedServiceClient | null> {
    const hash = sha256Hex(identifier);
    const now = Date.now();
    const cached = this.identifierCache.get(hash);
    if (cached && cached.until > now) return cached.client;
    const client = (await repo.findActiveServiceClientByIdentifier(this.database.db, hash)) ?? null;
    if (this.identifierCache.size >= IDENTIFIER_CACHE_MAX) this.identifierCache.clear();
    this.identifierCache.set(hash, { client, until: now + IDENTIFIER_CACHE_MS });
    return client;
  }
}
