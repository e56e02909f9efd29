/**
 * The demo accounts of the ERP simulator: retailers and the web-shop account as customers (stable customer
 * numbers the ordering service's tests refer to), and booked sales invoices for the monthly export.
 */
import { ARTICLE_NUMBERS } from './seed-catalogue';
import type { SalesInvoice } from './types';

/** Stable customer numbers: three retailers in different countries and the web-shop end-customer account. @internal */
export const CUSTOMER_NUMBERS = {
  retailerGermany: 'R-1001',
  retailerSwitzerland: 'R-1002',
  /** Not public: appears only in the internal retailer list. */
  retailerNorway: 'R-1003',
  /** Account of all public shop orders (the buyer's address is on each sales order). */
  webshop: 'C-9000',
} as const;

/** A demo customer. */
interface SeedCustomer {
  customerNumber: string;
  company: string;
  email: string;
  phone: string;
  website: string | null;
  street1: string;
  street2?: string;
  zipcode: string;
  city: string;
  state?: string;
  countryCode: string;
  retailer: boolean;
  retailerPublic?: boolean;
  servedCountries?: string[];
}

/** Three retailers in different countries (one not public) and the web-shop account. */
export const SEED_CUSTOMERS: readonly SeedCustomer[] = [
  {
    customerNumber: CUSTOMER_NUMBERS.retailerGermany,
    company: 'OL-Sport Nord GmbH',
    email: 'shop@ol-sport-nord.example',
    phone: '+494012345670',
    website: 'https://ol-sport-nord.example',
    street1: 'Hafenstraße 12',
    zipcode: '20457',
    city: 'Hamburg',
    countryCode: 'DE',
    retailer: true,
    retailerPublic: true,
    servedCountries: ['DE', 'AT', 'DK'],
  },
  {
    customerNumber: CUSTOMER_NUMBERS.retailerSwitzerland,
    company: 'Swiss Timing Supplies AG',
    email: 'info@swiss-timing-supplies.example',
    phone: '+41315550101',
    website: 'https://swiss-timing-supplies.example',
    street1: 'Bahnhofplatz 3',
    street2: '2. Stock',
    zipcode: '3011',
    city: 'Bern',
    state: 'BE',
    countryCode: 'CH',
    retailer: true,
    retailerPublic: true,
    servedCountries: ['CH', 'LI'],
  },
  {
    customerNumber: CUSTOMER_NUMBERS.retailerNorway,
    company: 'Nordic Orienteering AS',
    email: 'post@nordic-orienteering.example',
    phone: '+4722334455',
    website: null,
    street1: 'Storgata 45',
    zipcode: '0182',
    city: 'Oslo',
    countryCode: 'NO',
    retailer: true,
    retailerPublic: false,
    servedCountries: ['NO', 'SE', 'FI'],
  },
  {
    customerNumber: CUSTOMER_NUMBERS.webshop,
    company: 'Web shop end customers',
    email: 'shop@sports-timing.example',
    phone: '+4930123456789',
    website: null,
    street1: 'Am Zeitmesser 1',
    zipcode: '10115',
    city: 'Berlin',
    countryCode: 'DE',
    retailer: false,
  },
];

/** A demo booked invoice: `date` is the local (Europe/Berlin) invoice date, amounts net euros. */
interface SeedInvoice {
  invoiceNumber: string;
  date: string;
  customerNumber: string;
  items: { articleNumber: string; quantity: number }[];
  /** Default `OPEN_ITEM_CREATED` (booked). */
  status?: SalesInvoice['status'];
}

/**
 * Booked invoices of early 2025, for the monthly CSV export. `RE-2025-0004` is dated 1 March: local
 * midnight in Berlin is still 28 February in UTC, so a month filter in UTC would file it wrongly.
 */
export const SEED_INVOICES: readonly SeedInvoice[] = [
  {
    invoiceNumber: 'RE-2025-0001',
    date: '2025-01-14',
    customerNumber: CUSTOMER_NUMBERS.retailerGermany,
    items: [{ articleNumber: ARTICLE_NUMBERS.siac, quantity: 20 }],
  },
  {
    invoiceNumber: 'RE-2025-0002',
    date: '2025-02-03',
    customerNumber: CUSTOMER_NUMBERS.retailerSwitzerland,
    items: [
      { articleNumber: ARTICLE_NUMBERS.bsf8, quantity: 10 },
      { articleNumber: ARTICLE_NUMBERS.stationBattery, quantity: 10 },
    ],
  },
  {
    invoiceNumber: 'RE-2025-0003',
    date: '2025-02-28',
    customerNumber: CUSTOMER_NUMBERS.retailerNorway,
    items: [{ articleNumber: ARTICLE_NUMBERS.siCard10, quantity: 50 }],
  },
  {
    invoiceNumber: 'RE-2025-0004',
    date: '2025-03-01',
    customerNumber: CUSTOMER_NUMBERS.retailerGermany,
    items: [{ articleNumber: ARTICLE_NUMBERS.bs11, quantity: 2 }],
  },
  {
    invoiceNumber: 'RE-2025-0005',
    date: '2025-03-17',
    customerNumber: CUSTOMER_NUMBERS.webshop,
    items: [{ articleNumber: ARTICLE_NUMBERS.siacStarter, quantity: 1 }],
  },
  // April: a draft, a cancelled and a booked one (only the booked one is exported).
  {
    invoiceNumber: 'RE-2025-0006',
    date: '2025-04-02',
    customerNumber: CUSTOMER_NUMBERS.retailerGermany,
    items: [{ articleNumber: ARTICLE_NUMBERS.bsf8, quantity: 1 }],
    status: 'NEW',
  },
  {
    invoiceNumber: 'RE-2025-0007',
    date: '2025-04-03',
    customerNumber: CUSTOMER_NUMBERS.retailerGermany,
    items: [{ articleNumber: ARTICLE_NUMBERS.bsf8, quantity: 2 }],
    status: 'CANCELLED',
  },
  {
    invoiceNumber: 'RE-2025-0008',
    date: '2025-04-04',
    customerNumber: CUSTOMER_NUMBERS.retailerSwitzerland,
    items: [{ articleNumber: ARTICLE_NUMBERS.bsf8, quantity: 3 }],
    status: 'ENTRY_COMPLETED',
  },
];
