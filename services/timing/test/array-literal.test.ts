/**
 * The upload's array literals (punch-upload.repository.ts `textArrayLiteral`, `intArrayLiteral`) read back in
 * PostgreSQL as exactly the values given: bare where that is safe, quoted and escaped otherwise, NULL never.
 */
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@sports-timing/shared/src/testing';
import { intArrayLiteral, textArrayLiteral } from '../src/punches/punch-upload.repository';

let db: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  db = await createTestDatabase('arrays');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

async function readBack(literal: string, type: 'text' | 'int8'): Promise<unknown[]> {
  const { rows } = await client.query<{ v: unknown[] }>(`select $1::${type}[] as v`, [literal]);
  return rows[0].v;
}

it('passes text values through unchanged, quoting only what needs it', async () => {
  const plain = ['8621484', 'Control', 'VN2020-54', 'a.b:c+d_e'];
  expect(textArrayLiteral(plain)).toBe(`{${plain.join(',')}}`);
  expect(await readBack(textArrayLiteral(plain), 'text')).toEqual(plain);
  const tricky = ['NULL', 'null', '', 'a,b', 'x"y', 'b\\c', ' sp ', '{}', 'Ä', 'nullx', 'a b', '\n'];
  for (const v of tricky) expect({ v, back: await readBack(textArrayLiteral(['ok', v]), 'text') }).toEqual({ v, back: ['ok', v] });
  expect(await readBack(textArrayLiteral(tricky), 'text')).toEqual(tricky);
  expect(await readBack(textArrayLiteral([]), 'text')).toEqual([]);
});

it('writes safe integers and refuses anything else', async () => {
  const values = [0, -1, 1_580_584_563_000, Number.MAX_SAFE_INTEGER];
  expect((await readBack(intArrayLiteral(values), 'int8')).map(Number)).toEqual(values);
  expect(() => intArrayLiteral([1.5])).toThrow();
  expect(() => intArrayLiteral([Number.NaN])).toThrow();
});
