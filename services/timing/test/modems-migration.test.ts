/**
 * Migration 0013 (modems claimed by upload only, docs/decisions.md §5): up() drops the foreign key from event
 * modems to modems, so an event may name any serial, and releases the registrations no upload made (modems
 * without a punch: what naming them in an event claimed), leaving the events' names alone; down() registers
 * every named serial no one holds to the owner of the oldest event naming it and restores the key.
 */
import { Migrator } from 'kysely';
import { createDatabase, createLogger } from '@sports-timing/shared';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { migrations } from '../src/db/migrations';
import type { DB } from '../src/db/schema';
import { testConnectTimeoutMs } from '@sports-timing/shared/src/test-time';

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase('timing');
});
afterAll(() => testDb.drop());

test('up() releases the modems naming claimed and lets events name any serial; down() claims them for the event owners again', async () => {
  const database = createDatabase<DB>({ connectTimeoutMs: testConnectTimeoutMs(), url: testDb.url, schema: 'timing', logger: createLogger('test') });
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: () => Promise.resolve(migrations) }, migrationTableSchema: 'timing' });
  const q = <R extends object>(text: string, values: unknown[] = []) => database.pool.query<R>(text, values).then((r) => r.rows);
  const modems = () => q<{ serial: string; user_name: string }>('select m.serial, u.user_name from modems m join users u on u.id = m.user_id order by serial');
  const named = () => q<{ event_id: number; modem: string }>('select event_id, modem from event_modems order by event_id, modem');
  try {
    await database.pool.query('create schema if not exists timing');
    expect((await migrator.migrateTo('0012_own_writers_horizon')).error).toBeUndefined();
    const [club] = await q<{ id: number }>(`insert into users (user_name, role) values ('club', 'user') returning id`);
    const [squatter] = await q<{ id: number }>(`insert into users (user_name, role) values ('squatter', 'user') returning id`);
    // Before: naming claimed. The club uploaded for CLUB-1; the squatter named VICTIM-1 without an upload.
    await q(`insert into modems (serial, user_id) values ('CLUB-1', $1), ('VICTIM-1', $2)`, [club.id, squatter.id]);
    await q(`insert into punches (card, time, code, type, modem, reception_time_utc) values ('1', 0, 31, 'Control', 'CLUB-1', 0)`);
    const [clubEvent] = await q<{ id: number }>(`insert into events (name, owner_id) values ('club night', $1) returning id`, [club.id]);
    const [squatEvent] = await q<{ id: number }>(`insert into events (name, owner_id) values ('squat', $1) returning id`, [squatter.id]);
    await q(`insert into event_modems (event_id, modem) values ($1, 'CLUB-1'), ($2, 'VICTIM-1'), ($2, 'CLUB-1')`, [clubEvent.id, squatEvent.id]);
    // Negative control: before 0013 an event cannot name an unregistered serial.
    await expect(q(`insert into event_modems (event_id, modem) values ($1, 'NOBODY-1')`, [clubEvent.id])).rejects.toMatchObject({ code: '23503' });

    const up = await migrator.migrateToLatest();
    expect(up.error).toBeUndefined();
    expect(up.results?.map((r) => r.migrationName)).toContain('0013_modems_claimed_by_upload');
    expect(await modems()).toEqual([{ serial: 'CLUB-1', user_name: 'club' }]);
    await q(`insert into event_modems (event_id, modem) values ($1, 'NOBODY-1')`, [clubEvent.id]);
    expect(await named()).toEqual([
      { event_id: clubEvent.id, modem: 'CLUB-1' },
      { event_id: clubEvent.id, modem: 'NOBODY-1' },
      { event_id: squatEvent.id, modem: 'CLUB-1' },
      { event_id: squatEvent.id, modem: 'VICTIM-1' },
    ]);

    const down = await migrator.migrateTo('0012_own_writers_horizon');
    expect(down.error).toBeUndefined();
    expect(await modems()).toEqual([
      { serial: 'CLUB-1', user_name: 'club' },
      { serial: 'NOBODY-1', user_name: 'club' },
      { serial: 'VICTIM-1', user_name: 'squatter' },
    ]);
    await expect(q(`insert into event_modems (event_id, modem) values ($1, 'NOBODY-2')`, [clubEvent.id])).rejects.toMatchObject({ code: '23503' });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
  } finally {
    await database.close();
  }
});
