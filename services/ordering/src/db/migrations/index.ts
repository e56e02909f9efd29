/**
 * Migrations of the `ordering` schema, applied in name order at start (see migrateToLatest).
 */
import type { Migration } from 'kysely';
import * as m0001 from './0001_identity';
import * as m0002 from './0002_shop';
import * as m0003 from './0003_outbox';
import * as m0004 from './0004_orders';
import * as m0005 from './0005_maintenance';
import * as m0006 from './0006_order_flow';
import * as m0007 from './0007_erp';
import * as m0008 from './0008_order_items_index';
import * as m0009 from './0009_payment_refunds';
import * as m0010 from './0010_identity_hardening';
import * as m0011 from './0011_order_expiry';
import * as m0012 from './0012_erp_books';
import * as m0013 from './0013_payment_books';
import * as m0014 from './0014_outbox_due_by_kind';
import * as m0015 from './0015_payment_delivery_by_transaction';

/** All migrations by name. */
export const migrations: Record<string, Migration> = {
  '0001_identity': m0001,
  '0002_shop': m0002,
  '0003_outbox': m0003,
  '0004_orders': m0004,
  '0005_maintenance': m0005,
  '0006_order_flow': m0006,
  '0007_erp': m0007,
  '0008_order_items_index': m0008,
  '0009_payment_refunds': m0009,
  '0010_identity_hardening': m0010,
  '0011_order_expiry': m0011,
  '0012_erp_books': m0012,
  '0013_payment_books': m0013,
  '0014_outbox_due_by_kind': m0014,
  '0015_payment_delivery_by_transaction': m0015,
};
