/**
 * Tables of the transactional job outbox. Mirrors migrations 0003 and 0006.
 */
import type { ColumnType, Generated } from 'kysely';

/** `outbox_messages`: one row per job to run exactly once (per `kind` and `dedupe_key`). */
export interface OutboxMessagesTable {
  id: Generated<number>;
  /** Job kind, e.g. `mail`, `erp-sales-order`; picks the handler. */
  kind: string;
  /** Business identity of the job within its kind, e.g. `order-confirmation:42`; a second enqueue is a no-op. */
  dedupe_key: string;
  /** Mail only: RFC 5322 Message-ID, stable for the dedupe key so receivers can drop a resend. */
  message_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The job's JSON payload (kind-specific). */
  payload: ColumnType<unknown, string, string>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date, Date | undefined, Date>;
  locked_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  sent_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Set when the job failed permanently (maximum attempts or a permanent error); never retried after. */
  dead_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Last failure, secrets masked, at most 500 characters. */
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** All outbox tables. */
export interface OutboxTables {
  outbox_messages: OutboxMessagesTable;
}
