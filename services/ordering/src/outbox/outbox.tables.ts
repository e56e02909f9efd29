/**
 * Tables of the transactional outbox. Mirrors migration 0003.
 */
import type { ColumnType, Generated } from 'kysely';
import type { MailPayload } from '../mail/mailer';

/** `outbox_messages`: one row per message to deliver exactly once (per `dedupe_key`). */
export interface OutboxMessagesTable {
  id: Generated<number>;
  kind: ColumnType<'mail', 'mail' | undefined, never>;
  /** Business identity of the message, e.g. `order-confirmation:42`; a second enqueue is a no-op. */
  dedupe_key: string;
  /** RFC 5322 Message-ID, stable for the dedupe key so receivers can drop a resend. */
  message_id: string;
  payload: ColumnType<MailPayload, string, string>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date, Date | undefined, Date>;
  locked_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  sent_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** All outbox tables. */
export interface OutboxTables {
  outbox_messages: OutboxMessagesTable;
}
