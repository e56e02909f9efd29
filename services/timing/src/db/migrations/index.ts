/**
 * Migrations of the `timing` schema, applied in name order at start (see migrateToLatest).
 */
import type { Migration } from 'kysely';
import * as m0001 from './0001_timing';
import * as m0002 from './0002_punch_counts';
import * as m0003 from './0003_punch_counts_mid_level';
import * as m0004 from './0004_upload_by_key';
import * as m0005 from './0005_insert_outside_lock';
import * as m0006 from './0006_resend_key_time_order';
import * as m0007 from './0007_drop_insert_punch_batch';
import * as m0008 from './0008_active_key_owner';
import * as m0009 from './0009_upload_quota';
import * as m0010 from './0010_punch_counts_top_level';
import * as m0011 from './0011_counter_maintenance';
import * as m0012 from './0012_own_writers_horizon';
import * as m0013 from './0013_modems_claimed_by_upload';
import * as m0014 from './0014_key_last_used';
import * as m0015 from './0015_quota_in_upload';

/** All migrations by name. */
export const migrations: Record<string, Migration> = {
  '0001_timing': m0001,
  '0002_punch_counts': m0002,
  '0003_punch_counts_mid_level': m0003,
  '0004_upload_by_key': m0004,
  '0005_insert_outside_lock': m0005,
  '0006_resend_key_time_order': m0006,
  '0007_drop_insert_punch_batch': m0007,
  '0008_active_key_owner': m0008,
  '0009_upload_quota': m0009,
  '0010_punch_counts_top_level': m0010,
  '0011_counter_maintenance': m0011,
  '0012_own_writers_horizon': m0012,
  '0013_modems_claimed_by_upload': m0013,
  '0014_key_last_used': m0014,
  '0015_quota_in_upload': m0015,
};
