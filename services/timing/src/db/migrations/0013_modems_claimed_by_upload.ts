/**
 * A modem is claimed by uploading for it only (docs/decisions.md §5, "A modem belongs to the user that first
 * uploads for it"): an event may name any serial, registered or not, so `event_modems.modem` no longer
 * references `modems`. Which named modems an event's reads cover is decided by the readers (the modems
 * registered to the event's owner, all named ones for an administrator's event; events.repository.ts).
 *
 * up() also releases the registrations that no upload made: modems without a single punch (a punch is never
 * deleted by the service, so every modem an upload registered has one, but for an upload refused after the
 * registration). Those are the serials that naming them in an event claimed; they are claimed again by the
 * first upload for them.
 *
 * down() registers every named serial that is not registered to the owner of the oldest event naming it (as
 * naming did before) and restores the foreign key. The released registrations are not restored.
 */
import { sql, type Kysely } from 'kysely';

/** Drops the foreign key from event modems to modems and releases the modems no upload registered. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table event_modems drop constraint event_modems_modem_fkey`.execute(db);
  await sql`delete from modems m where not exists (select 1 from punches p where p.modem = m.serial)`.execute(db);
}

/** Registers the named serials no one holds (to the owner of the oldest event naming them) and restores the foreign key. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
      insert into modems (serial, user_id)
      select distinct on (em.modem) em.modem, e.owner_id
        from event_modems em join events e on e.id = em.event_id
        where not exists (select 1 from modems m where m.serial = em.modem)
        order by em.modem, e.id
    `.execute(db);
  await sql`alter table event_modems add constraint event_modems_modem_fkey foreign key (modem) references modems (serial)`.execute(db);
}
