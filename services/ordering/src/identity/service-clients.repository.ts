/**
 * SQL of the registered service clients (client-credentials grant, `X-Service-Client-Id`).
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { DB } from '../db/schema';
import type { ServiceClientsTable } from '../db/tables/identity.tables';

/** A service_clients row. */
export type ServiceClientRow = Selectable<ServiceClientsTable>;

/** Inserts a client; a taken name or client id surfaces as PostgreSQL error 23505. */
export function insertServiceClient(db: Kysely<DB>, row: Insertable<ServiceClientsTable>): Promise<ServiceClientRow> {
  return db.insertInto('service_clients').values(row).returningAll().executeTakeFirstOrThrow();
}

/** All clients by name. */
export function listServiceClients(db: Kysely<DB>): Promise<ServiceClientRow[]> {
  return db
    .selectFrom('service_clients')
    .selectAll()
    .orderBy(sql`lower(name)`)
    .execute();
}

/** The client with this public client id, or undefined. */
export function findServiceClientByClientId(db: Kysely<DB>, clientId: string): Promise<ServiceClientRow | undefined> {
  return db.selectFrom('service_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
}

/** The client with this id, or undefined. */
export function findServiceClientById(db: Kysely<DB>, id: number): Promise<ServiceClientRow | undefined> {
  return db.selectFrom('service_clients').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The active client whose identifier hashes to `identifierHash`, or undefined. */
export function findActiveServiceClientByIdentifier(db: Kysely<DB>, identifierHash: string): Promise<Pick<ServiceClientRow, 'id' | 'name'> | undefined> {
  return db.selectFrom('service_clients').select(['id', 'name']).where('identifier_hash', '=', identifierHash).where('is_active', '=', true).executeTakeFirst();
}
