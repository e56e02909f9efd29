/**
 * Migrations of the `timing` schema, applied in name order at start (see migrateToLatest).
 */
import type { Migration } from 'kysely';
import { m0001Timing } from './0001_timing';
import { m0002PunchCounts } from './0002_punch_counts';
import { m0003PunchCountsMidLevel } from './0003_punch_counts_mid_level';
import { m0004UploadByKey } from './0004_upload_by_key';
import { m0005InsertOutsideLock } from './0005_insert_outside_lock';
import { m0006ResendKeyTimeOrder } from './0006_resend_key_time_order';
import { m0007DropInsertPunchBatch } from './0007_drop_insert_punch_batch';
import { m0008ActiveKeyOwner } from './0008_active_key_owner';
import { m0009UploadQuota } from './0009_upload_quota';

/** All migrations by name. */
export const migrations: Record<string, Migration> = {
  '0001_timing': m0001Timing,
  '0002_punch_counts': m0002PunchCounts,
  '0003_punch_counts_mid_level': m0003PunchCountsMidLevel,
  '0004_upload_by_key': m0004UploadByKey,
  '0005_insert_outside_lock': m0005InsertOutsideLock,
  '0006_resend_key_time_order': m0006ResendKeyTimeOrder,
  '0007_drop_insert_punch_batch': m0007DropInsertPunchBatch,
  '0008_active_key_owner': m0008ActiveKeyOwner,
  '0009_upload_quota': m0009UploadQuota,
};
