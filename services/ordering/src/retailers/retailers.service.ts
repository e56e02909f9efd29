/**
 * Retailers (`listPublicRetailers`, `listInternalRetailers`, `importRetailers`): ERP customers with the custom
 * field `retailer`; `retailerPublic` puts them in the public list; `retailerServedCountries` (comma list
 * of ISO 3166-1 alpha-2) names the countries they serve. The shop serves the retailers of the default
 * ERP system (`weclapp`).
 */
import type { Insertable, Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../db/schema';
import { customAttributeValue, type ErpClient } from '../erp/erp.client';
import type { ErpEntityHandler } from '../erp/erp-webhook.service';
import type { RetailersTable } from '../db/tables/erp.tables';
import { ERP_ATTRIBUTE_KEYS, type ErpCustomer, type ErpSystem } from '../erp/erp.types';
import type { components } from '../generated/openapi';
import { lockRetailerImport, replaceRetailerRows, selectRetailers, type RetailerRow } from './retailers.repository';

/** The ERP system whose retailers the shop lists. */
const RETAILER_ERP_SYSTEM: ErpSystem = 'weclapp';

/** `RetailerInfo` of the spec. */
export type RetailerInfo = components['schemas']['RetailerInfo'];

/** Outcome of an import. */
export interface RetailerImportResult {
  imported: number;
  public: number;
  removed: number;
  /** Retailers left out (blocked, or without address/city/country), by customer number. */
  skipped: string[];
}

function mapCustomer(c: ErpCustomer, isPublic: boolean, served: string | null): Insertable<RetailersTable> | null {
  if (c.customerBlocked) return null;
  const address = c.addresses?.find((a) => a.id === c.primaryAddressId) ?? c.addresses?.find((a) => a.invoiceAddress) ?? c.addresses?.[0];
  const name = c.company?.trim() || [c.firstName, c.lastName].filter(Boolean).join(' ').trim();
  const country = address?.countryCode?.trim().toUpperCase();
  if (!name || !address?.street1 || !address.city || !country || !/^[A-Z]{2}$/.test(country)) return null;
  const servedCountries = [
    ...new Set(
      (served ?? '')
        .split(',')
        .map((s) => s.trim().toUpperCase())
        .filter((s) => /^[A-Z]{2}$/.test(s)),
    ),
  ];
  return {
    erp_system: RETAILER_ERP_SYSTEM,
    erp_id: c.id,
    erp_version: c.version,
    customer_number: c.customerNumber ?? c.id,
    company: name,
    is_public: isPublic,
    email: c.email ?? null,
    phone: c.phone ?? null,
    website: c.website ?? null,
    street: address.street1,
    street2: address.street2 ?? null,
    zip_code: address.zipcode ?? null,
    city: address.city,
    state: address.state ?? null,
    country_code: country,
    served_countries: servedCountries.length ? servedCountries : [country],
    imported_at: new Date(),
  };
}

/**
 * Imports the retailers of {@link RETAILER_ERP_SYSTEM}, replacing the stored list atomically. Throws
 * `ErpError` when the ERP cannot be read (nothing is written then).
 */
export async function importRetailers(deps: { db: Kysely<DB>; erp: ErpClient; logger: Logger }): Promise<RetailerImportResult> {
  const system = RETAILER_ERP_SYSTEM;
  const [publicDef, servedDef] = await Promise.all([
    deps.erp.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.retailerPublic),
    deps.erp.attributeDefinition(system, ERP_ATTRIBUTE_KEYS.retailerServedCountries),
  ]);
  const customers = await deps.erp.listCustomers(system, { retailersOnly: true });
  const rows: Insertable<RetailersTable>[] = [];
  const skipped: string[] = [];
  for (const c of customers) {
    const served = customAttributeValue(c.customAttributes, servedDef);
    const row = mapCustomer(c, customAttributeValue(c.customAttributes, publicDef) === true, typeof served === 'string' ? served : null);
    if (row) rows.push(row);
    else skipped.push(c.customerNumber ?? c.id);
  }
  // One short transaction: readers see the old or the new list, never a mix; concurrent imports of one
  // system wait for each other.
  const { removed } = await deps.db.transaction().execute(async (trx) => {
    await lockRetailerImport(trx, system);
    return replaceRetailerRows(trx, system, rows);
  });
  const result = { imported: rows.length, public: rows.filter((r) => r.is_public).length, removed, skipped };
  deps.logger.info(result, 'ERP retailer import');
  return result;
}

/** Summary text of the import operation. */
export function importSummary(r: RetailerImportResult): string {
  return `Imported ${r.imported} retailers (${r.public} public), removed ${r.removed}${r.skipped.length ? `, skipped ${r.skipped.length} without usable address or blocked (${r.skipped.join(', ')})` : ''}.`;
}

function toInfo(r: RetailerRow, internal: boolean): RetailerInfo {
  const info: RetailerInfo = {
    name: r.company,
    address1: r.street ?? '',
    address2: r.street2,
    zip: r.zip_code,
    city: r.city ?? '',
    state: r.state,
    countryCode: r.country_code ?? '',
    servedCountryCodes: r.served_countries,
    email: r.email,
    phoneNumber: r.phone,
    website: r.website,
  };
  return internal
    ? { erpEntityId: r.erp_id, customerNumber: r.customer_number, isPublic: r.is_public, importedAt: r.imported_at.toISOString(), ...info }
    : info;
}

/** The public list (public fields only) or the internal list (all retailers, internal fields). */
export async function listRetailers(db: Kysely<DB>, internal: boolean): Promise<RetailerInfo[]> {
  return (await selectRetailers(db, RETAILER_ERP_SYSTEM, !internal)).map((r) => toInfo(r, internal));
}

/**
 * ERP webhook handler of `customer` and `party`: a changed customer may be a retailer (or stop being one), so
 * the retailer list of {@link RETAILER_ERP_SYSTEM} is re-imported (a few customers; the whole list keeps the
 * replace-atomically rule of `import-retailers`); deliveries of other systems are ignored.
 */
export const retailersWebhookHandler: ErpEntityHandler = async (event, ctx) => {
  if (event.erpSystem !== RETAILER_ERP_SYSTEM) return;
  await importRetailers({ db: ctx.db, erp: ctx.erp, logger: ctx.logger });
};
