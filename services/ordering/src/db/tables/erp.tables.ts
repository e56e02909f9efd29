/**
 * Tables of the ERP area. Mirrors migration 0007.
 */
import type { ColumnType, Generated } from 'kysely';

/** `erp_api_tokens`: the ERP API token per ERP system, encrypted (AAD `erp-api-token:<erp_system>`). */
interface ErpApiTokensTable {
  erp_system: string;
  /** Output of `EnvelopeEncryption.encrypt` (key version byte first). */
  ciphertext: string;
  key_version: number;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  /** `user:<id>:<name>` of the admin who stored it. */
  updated_by: string | null;
}

/** `retailers`: ERP customers marked as retailers (maintenance import). */
export interface RetailersTable {
  erp_system: string;
  erp_id: string;
  erp_version: string;
  customer_number: string;
  company: string;
  is_public: ColumnType<boolean, boolean | undefined, boolean>;
  email: string | null;
  phone: string | null;
  website: string | null;
  street: string | null;
  street2: string | null;
  zip_code: string | null;
  city: string | null;
  state: string | null;
  country_code: string | null;
  served_countries: ColumnType<string[], string[] | undefined, string[]>;
  imported_at: ColumnType<Date, Date | undefined, Date>;
}

/** `erp_webhook_jobs`: coalesced pending webhook work, one row per ERP entity. */
export interface ErpWebhookJobsTable {
  id: Generated<string>;
  erp_system: string;
  entity_name: string;
  entity_id: string;
  /** `type` of the latest delivery (`create`, `update`, `delete`, …); informational only. */
  last_type: string;
  /** Bumped by every delivery; the worker deletes the row only if it is unchanged since its claim. */
  generation: ColumnType<number, number | undefined, number>;
  deliveries: ColumnType<number, number | undefined, number>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date, Date | undefined, Date>;
  /** Claimed by a worker until then (crash recovery: an expired claim is claimable again). */
  locked_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_error: string | null;
  received_at: ColumnType<Date, Date | undefined, Date>;
}

/** All ERP tables. */
export interface ErpTables {
  erp_api_tokens: ErpApiTokensTable;
  retailers: RetailersTable;
  erp_webhook_jobs: ErpWebhookJobsTable;
}
