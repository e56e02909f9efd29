/**
 * The `ordering` schema as its migrations build it: the checks of test/support/schema-checks.ts
 * (docs/database.md "What the tests check"), and the order-state check constraints held to the spec's
 * `OrderState` enum (docs/database.md "Check constraints that repeat a spec enum").
 */
import { componentSchemaOf, loadSpec } from '@sports-timing/shared';
import { SCHEMA_SERVICES } from '../../../scripts/schema-dump';
import { schemaChecks } from '../../../test/support/schema-checks';
import { SPEC_FILE } from '../src/version';

/** The columns that hold an order state; each has a check constraint listing exactly the spec's states. */
const ORDER_STATE_COLUMNS = ['order_state_changes.from_state', 'order_state_changes.to_state', 'orders.state'];

schemaChecks(SCHEMA_SERVICES.ordering, {
  'every check constraint that lists order states lists exactly the spec OrderState enum': async (database) => {
    const states = componentSchemaOf(loadSpec(SPEC_FILE), 'OrderState').enum as string[];
    const { rows } = await database.pool.query<{ name: string; columns: string; definition: string }>(
      `select c.conname as name, string_agg(t.relname || '.' || a.attname, ',' order by a.attname) as columns,
              pg_get_constraintdef(c.oid) as definition
         from pg_constraint c
         join pg_class t on t.oid = c.conrelid
         join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
        where c.contype = 'c' and c.connamespace = 'ordering'::regnamespace
        group by c.oid, c.conname
        order by 2`,
    );
    const listed = (definition: string) => [...definition.matchAll(/'([^']*)'::text/g)].map((m) => m[1]);
    // Any check naming one order state is an order-state list (card_numbers' 'reserved'/'sold' names none).
    const stateChecks = rows.filter((r) => listed(r.definition).some((v) => states.includes(v)));
    expect(stateChecks.map((r) => r.columns)).toEqual(ORDER_STATE_COLUMNS);
    for (const r of stateChecks) expect({ constraint: r.name, states: listed(r.definition) }).toEqual({ constraint: r.name, states });
  },
});
