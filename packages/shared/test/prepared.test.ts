/**
 * Statements marked with `PREPARED` (db.ts) run as named prepared statements, once parsed per connection;
 * unmarked ones do not; and a marked statement that names its columns keeps working after a migration adds
 * a column under it (the reason the marker asks for named columns).
 */
import { sql } from 'kysely';
import { createDatabase, createLogger, PREPARED } from '../src';
import { createTestDatabase } from '../src/testing';

test('marked statements are prepared once per connection; unmarked ones are not', async () => {
  const testDb = await createTestDatabase('prepared');
  const database = createDatabase<Record<string, never>>({ url: testDb.url, schema: 'prepared_svc', max: 1, logger: createLogger('test') });
  try {
    const db = database.db;
    await sql`create schema if not exists prepared_svc`.execute(db);
    await sql`create table prepared_svc.things (id int primary key, name text not null)`.execute(db);
    await sql`insert into prepared_svc.things values (1, 'one'), (2, 'two')`.execute(db);
    const byId = (id: number) => sql<{ id: number; name: string }>`${PREPARED} select id, name from prepared_svc.things where id = ${id}`.execute(db);
    expect((await byId(1)).rows).toEqual([{ id: 1, name: 'one' }]);
    expect((await byId(2)).rows).toEqual([{ id: 2, name: 'two' }]);
    await sql`select ${'unmarked'}::text as unmarked_x`.execute(db);
    // One connection (max 1): what it has prepared is what this session shows.
    const prepared = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
    expect(prepared.rows.filter((r) => r.statement.includes('prepared_svc.things where id'))).toHaveLength(1);
    expect(prepared.rows.some((r) => r.statement.includes('unmarked_x'))).toBe(false);
    // A migration adds a column: the prepared statement, naming its columns, still answers.
    await sql`alter table prepared_svc.things add column size int`.execute(db);
    expect((await byId(2)).rows).toEqual([{ id: 2, name: 'two' }]);
  } finally {
    await database.close();
    await testDb.drop();
  }
});
