/**
 * Sales invoices of a month as CSV (`devGetSalesInvoicesCsvExport`): the booked ERP
 * invoices of the calendar month in the tenant's time zone (Europe/Berlin) — drafts (`NEW`) and cancelled
 * ones are left out; VAT is gross − net (weclapp has no tax amount) — with customer name and
 * country from the ERP customer, and the ERP sales order number. Built with csv-stringify with
 * `escape_formulas` (ERP texts cannot become spreadsheet formulas). Throws `ErpError` on ERP failures.
 */
import { stringify } from 'csv-stringify/sync';
import type { ErpClient } from './erp.client';
import type { ErpSystem } from './erp.types';

/** Header row of the export. */
const SALES_INVOICE_CSV_COLUMNS = [
  'invoiceNumber',
  'invoiceDate',
  'customerNumber',
  'customerName',
  'countryCode',
  'netAmountCents',
  'vatAmountCents',
  'grossAmountCents',
  'currency',
  'orderNumber',
] as const;

/** Invoice statuses the export leaves out: drafts and cancelled invoices are not revenue. */
const NOT_EXPORTED = new Set<string>(['NEW', 'CANCELLED']);

/** Signed exact cents of an ERP decimal string (`"-12.5"` → -1250); null when malformed. */
function signedCents(text: string | undefined | null): number | null {
  const m = /^(-?)(\d{1,13})(?:\.(\d{1,2})0*)?$/.exec((text ?? '').trim());
  if (!m) return null;
  const cents = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
  return m[1] ? -cents : cents;
}

/** VAT in cents as gross − net; empty when either amount is malformed. */
function vatCents(net: string, gross: string): number | '' {
  const n = signedCents(net);
  const g = signedCents(gross);
  return n === null || g === null ? '' : g - n;
}

/** `YYYY-MM-DD` of an instant in `timeZone`. */
function localDate(ms: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms));
}

/** The CSV text of the invoices of `year`/`month` (1–12) of `system`. */
export async function salesInvoicesCsv(erp: ErpClient, system: ErpSystem, year: number, month: number, timeZone = 'Europe/Berlin'): Promise<string> {
  const invoices = (await erp.listSalesInvoices(system, year, month)).filter((i) => !NOT_EXPORTED.has(i.status));
  const customers = new Map((invoices.length ? await erp.listCustomers(system) : []).map((c) => [c.id, c]));
  const orderNumbers = new Map<string, string | null>();
  for (const id of new Set(invoices.map((i) => i.salesOrderId).filter((x): x is string => !!x))) {
    orderNumbers.set(id, (await erp.getSalesOrder(system, id))?.orderNumber ?? null);
  }
  const rows = invoices.map((inv) => {
    const c = inv.customerId ? customers.get(inv.customerId) : undefined;
    const address = c?.addresses?.find((a) => a.invoiceAddress) ?? c?.addresses?.find((a) => a.id === c.primaryAddressId) ?? c?.addresses?.[0];
    const name = c ? c.company || [c.firstName, c.lastName].filter(Boolean).join(' ') : '';
    return [
      inv.invoiceNumber,
      localDate(inv.invoiceDate, timeZone),
      inv.customerNumber ?? c?.customerNumber ?? '',
      name ?? '',
      address?.countryCode ?? '',
      signedCents(inv.netAmount) ?? '',
      vatCents(inv.netAmount ?? '0', inv.grossAmount ?? '0'),
      signedCents(inv.grossAmount) ?? '',
      inv.recordCurrencyName ?? 'EUR',
      inv.salesOrderId ? (orderNumbers.get(inv.salesOrderId) ?? '') : '',
    ];
  });
  return stringify(rows, { header: true, columns: [...SALES_INVOICE_CSV_COLUMNS], escape_formulas: true });
}
