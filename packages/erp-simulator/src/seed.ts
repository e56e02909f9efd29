/**
 * The demo data of the ERP simulator: the shop catalogue (cards, stations, accessories, sets), the custom
 * attribute definitions that mark shop articles, the retailers as customers, and booked sales invoices.
 *
 * Article numbers, customer numbers and attribute keys are stable strings: the ordering service's own demo
 * catalogue and tests refer to them (import these constants rather than repeating the strings). Prices are
 * net euros as decimal strings, like weclapp; VAT is the German standard rate (19 %).
 */
import { ERP_ATTRIBUTE_KEYS, type ErpSetSlotConfiguration } from '@sports-timing/shared/src/erp-contract';
import type { Article, CustomAttributeDefinition, Customer, SalesInvoice, TenantData } from './types';

/** Stable article numbers of the demo catalogue. */
export const ARTICLE_NUMBERS = {
  siac: 'SIAC1',
  siCard10: 'SI-CARD10',
  siCard9: 'SI-CARD9',
  bsf8: 'BSF8',
  bs11: 'BS11-BL',
  bsm8: 'BSM8-USB',
  /** Retailer-only (user group `retailer`). */
  bsf8RetailerPack: 'BSF8-PACK10',
  /** Internal-only (user group `internal`). */
  siacBatteryService: 'SIAC-BATTERY-SERVICE',
  /** Sub-item-only accessories. */
  cardHolder: 'CARD-HOLDER',
  cardHolderWrist: 'CARD-HOLDER-WRIST',
  stationBattery: 'BAT-BSF8',
  /** Sets with locked and configurable slots. */
  trainingSet: 'TRAINING-SET',
  siacStarter: 'SIAC-STARTER',
  /** Not a shop article (custom field `shopArticle` false). */
  spareBoard: 'SPARE-PCB-BSF8',
  /** SPORTident Center subscription (category `subscriptions`, internal): sold by quotation only. */
  centerSubscription: 'CENTER-LTE-1Y',
  /** Shipping costs: the article of a sales order's shipping cost positions (not a shop article). */
  shipping: 'SHIPPING',
} as const;

/**
 * `attributeKey` of the custom attribute definitions (the shared contract's list). Clients find a definition's
 * id by its key (`GET /customAttributeDefinition`), never by a hard-coded id.
 */
export const ATTRIBUTE_KEYS = ERP_ATTRIBUTE_KEYS;

/** Id of the unit "piece" every seed article is counted in (weclapp: a `unit` entity). */
const UNIT_ID_PIECE = '10';
/** Id of the currency EUR (weclapp: a `currency` entity; tenant-specific in a real weclapp). */
export const CURRENCY_ID_EUR = '248';
/** Id of the currency CHF (a second currency, so that a document's currency is a real choice). */
const CURRENCY_ID_CHF = '249';

/**
 * The tenant's sales taxes (weclapp `tax`, `taxType` VALUE_ADDED_TAX): German standard, reduced and zero rate,
 * plus a second 19 % tax of another kind (import sales tax) that a client must not pick for sales VAT.
 */
const SEED_TAXES: readonly { id: string; name: string; taxType: 'VALUE_ADDED_TAX' | 'IMPORT_SALES_TAX'; taxValue: string }[] = [
  { id: '301', name: 'Einfuhrumsatzsteuer 19%', taxType: 'IMPORT_SALES_TAX', taxValue: '19' },
  { id: '302', name: 'Umsatzsteuer 19%', taxType: 'VALUE_ADDED_TAX', taxValue: '19' },
  { id: '303', name: 'Umsatzsteuer 7%', taxType: 'VALUE_ADDED_TAX', taxValue: '7' },
  { id: '304', name: 'Steuerfrei (Ausfuhr)', taxType: 'VALUE_ADDED_TAX', taxValue: '0' },
];
/** The user the simulator's own changes are recorded as (weclapp's `lastModifiedByUserId`). */
export const SYSTEM_USER_ID = '1';

/** Values of the LIST attribute `shopUserGroup`. */
const USER_GROUPS = ['public', 'retailer', 'internal'] as const;
/** Values of the LIST attribute `shopCategory`. */
const CATEGORIES = ['cards', 'stations', 'accessories', 'sets', 'services', 'spare-parts', 'subscriptions'] as const;
/** Values of the LIST attribute `shopCardType`. */
const CARD_TYPES = ['sicard9', 'sicard10', 'siac1'] as const;

/** Stable customer numbers: three retailers in different countries and the web-shop end-customer account. */
export const CUSTOMER_NUMBERS = {
  retailerGermany: 'R-1001',
  retailerSwitzerland: 'R-1002',
  /** Not public: appears only in the internal retailer list. */
  retailerNorway: 'R-1003',
  /** Account of all public shop orders (the buyer's address is on each sales order). */
  webshop: 'C-9000',
} as const;

/** Default API tokens of the simulator's tenants (development only; a real tenant has its own). */
export const DEFAULT_TOKENS = { main: 'dev-erp-token-weclapp', sandbox: 'dev-erp-token-weclapp-sandbox' } as const;

/** A BOM slot of a demo set. */
interface SeedBomItem {
  position: number;
  defaultArticle: string;
  valid: string[];
  quantity?: number;
  locked?: boolean;
  configurable?: boolean;
  optional?: boolean;
  configuration?: Record<string, string>;
  excluded?: string[];
}

/** A demo article as the seed describes it (the simulator turns it into a weclapp `article`). */
export interface SeedArticle {
  articleNumber: string;
  /** Texts by language; `en` becomes `name`/`description`, the others `translations`. */
  name: Record<'en' | 'de' | 'fr', string>;
  description: Record<'en' | 'de' | 'fr', string>;
  /** Net unit price in euros (decimal string). */
  netPrice: string;
  isShopArticle: boolean;
  userGroup: (typeof USER_GROUPS)[number];
  category: (typeof CATEGORIES)[number];
  cardType?: (typeof CARD_TYPES)[number];
  subitemOnly?: boolean;
  configurableAttributes?: string[];
  service?: boolean;
  bom?: SeedBomItem[];
}

const PERSONAL = ['cardNumber', 'personalDataFirstName', 'personalDataLastName'];

/** The demo catalogue, in catalogue order. */
export const SEED_ARTICLES: readonly SeedArticle[] = [
  {
    articleNumber: ARTICLE_NUMBERS.siac,
    name: { en: 'SIAC', de: 'SIAC', fr: 'SIAC' },
    description: {
      en: 'Active contactless timing card (Air+), 128 punches, battery-powered, personalisable.',
      de: 'Aktive kontaktlose Zeitmesskarte (Air+), 128 Posten, batteriebetrieben, personalisierbar.',
      fr: 'Carte de chronométrage active sans contact (Air+), 128 postes, à pile, personnalisable.',
    },
    netPrice: '50.34',
    isShopArticle: true,
    userGroup: 'public',
    category: 'cards',
    cardType: 'siac1',
    configurableAttributes: ['cardNumber', 'feedbackSignal', 'personalDataFirstName', 'personalDataLastName'],
  },
  {
    articleNumber: ARTICLE_NUMBERS.siCard10,
    name: { en: 'SI-Card 10', de: 'SI-Card 10', fr: 'SI-Card 10' },
    description: {
      en: 'Timing card with 128 punches, personalisable.',
      de: 'Zeitmesskarte mit 128 Posten, personalisierbar.',
      fr: 'Carte de chronométrage, 128 postes, personnalisable.',
    },
    netPrice: '33.53',
    isShopArticle: true,
    userGroup: 'public',
    category: 'cards',
    cardType: 'sicard10',
    configurableAttributes: PERSONAL,
  },
  {
    articleNumber: ARTICLE_NUMBERS.siCard9,
    name: { en: 'SI-Card 9', de: 'SI-Card 9', fr: 'SI-Card 9' },
    description: {
      en: 'Entry-level timing card with 50 punches, personalisable.',
      de: 'Einsteiger-Zeitmesskarte mit 50 Posten, personalisierbar.',
      fr: "Carte de chronométrage d'entrée de gamme, 50 postes, personnalisable.",
    },
    netPrice: '20.92',
    isShopArticle: true,
    userGroup: 'public',
    category: 'cards',
    cardType: 'sicard9',
    configurableAttributes: PERSONAL,
  },
  {
    articleNumber: ARTICLE_NUMBERS.bsf8,
    name: { en: 'BSF8 control station', de: 'BSF8 Poststation', fr: 'Boîtier de contrôle BSF8' },
    description: {
      en: 'Control station with Air+ for SIAC, battery-powered.',
      de: 'Poststation mit Air+ für SIAC, batteriebetrieben.',
      fr: 'Boîtier de contrôle avec Air+ pour SIAC, à pile.',
    },
    netPrice: '167.23',
    isShopArticle: true,
    userGroup: 'public',
    category: 'stations',
  },
  {
    articleNumber: ARTICLE_NUMBERS.bs11,
    name: { en: 'BS11 large station (loop antenna)', de: 'BS11 Großstation (Schleifenantenne)', fr: 'Grand boîtier BS11 (antenne boucle)' },
    description: {
      en: 'Finish and start station with loop antenna for contactless SIAC punching at a distance.',
      de: 'Ziel- und Startstation mit Schleifenantenne für kontaktloses Stempeln mit SIAC auf Distanz.',
      fr: "Boîtier d'arrivée et de départ avec antenne boucle pour pointage SIAC à distance.",
    },
    netPrice: '419.33',
    isShopArticle: true,
    userGroup: 'public',
    category: 'stations',
  },
  {
    articleNumber: ARTICLE_NUMBERS.bsm8,
    name: { en: 'BSM8 master station (USB)', de: 'BSM8 Masterstation (USB)', fr: 'Boîtier maître BSM8 (USB)' },
    description: {
      en: 'Reads cards into the timing software on a PC.',
      de: 'Liest Karten in die Auswertungssoftware am PC ein.',
      fr: 'Lit les cartes dans le logiciel de chronométrage sur PC.',
    },
    netPrice: '142.01',
    isShopArticle: true,
    userGroup: 'public',
    category: 'stations',
  },
  {
    articleNumber: ARTICLE_NUMBERS.bsf8RetailerPack,
    name: { en: 'BSF8 control station, retailer pack of 10', de: 'BSF8 Poststation, Händlerpaket à 10', fr: 'Boîtier BSF8, lot revendeur de 10' },
    description: { en: 'Ten BSF8 control stations for resale.', de: 'Zehn BSF8 Poststationen zum Wiederverkauf.', fr: 'Dix boîtiers BSF8 pour la revente.' },
    netPrice: '1504.20',
    isShopArticle: true,
    userGroup: 'retailer',
    category: 'stations',
  },
  {
    articleNumber: ARTICLE_NUMBERS.siacBatteryService,
    name: { en: 'SIAC battery replacement (service)', de: 'SIAC Batteriewechsel (Service)', fr: 'Remplacement de pile SIAC (service)' },
    description: {
      en: 'Battery replacement of a returned SIAC by the service department.',
      de: 'Batteriewechsel einer eingesandten SIAC durch den Service.',
      fr: "Remplacement de la pile d'une SIAC retournée par le service.",
    },
    netPrice: '12.60',
    isShopArticle: true,
    userGroup: 'internal',
    category: 'services',
    service: true,
  },
  {
    articleNumber: ARTICLE_NUMBERS.cardHolder,
    name: { en: 'Finger card holder', de: 'Fingerhalter für Karten', fr: 'Support de carte au doigt' },
    description: {
      en: 'Elastic finger strap for SI-Cards and SIAC.',
      de: 'Elastische Fingerschlaufe für SI-Cards und SIAC.',
      fr: 'Sangle élastique au doigt pour SI-Cards et SIAC.',
    },
    netPrice: '2.10',
    isShopArticle: true,
    userGroup: 'public',
    category: 'accessories',
    subitemOnly: true,
  },
  {
    articleNumber: ARTICLE_NUMBERS.cardHolderWrist,
    name: { en: 'Wrist card holder', de: 'Handgelenkhalter für Karten', fr: 'Support de carte au poignet' },
    description: { en: 'Wrist strap for SI-Cards and SIAC.', de: 'Handgelenkband für SI-Cards und SIAC.', fr: 'Bracelet pour SI-Cards et SIAC.' },
    netPrice: '2.94',
    isShopArticle: true,
    userGroup: 'public',
    category: 'accessories',
    subitemOnly: true,
  },
  {
    articleNumber: ARTICLE_NUMBERS.stationBattery,
    name: { en: 'Station battery (3.6 V lithium)', de: 'Stationsbatterie (3,6 V Lithium)', fr: 'Pile de boîtier (lithium 3,6 V)' },
    description: { en: 'Replacement battery for BSF8 stations.', de: 'Ersatzbatterie für BSF8 Stationen.', fr: 'Pile de rechange pour boîtiers BSF8.' },
    netPrice: '8.32',
    isShopArticle: true,
    userGroup: 'public',
    category: 'accessories',
    subitemOnly: true,
  },
  {
    articleNumber: ARTICLE_NUMBERS.trainingSet,
    name: { en: 'Training set', de: 'Trainingsset', fr: "Kit d'entraînement" },
    description: {
      en: 'Five BSF8 control stations with spare batteries, a personalisable card of your choice and a card holder.',
      de: 'Fünf BSF8 Poststationen mit Ersatzbatterien, eine personalisierbare Karte nach Wahl und ein Kartenhalter.',
      fr: 'Cinq boîtiers BSF8 avec piles de rechange, une carte personnalisable au choix et un support de carte.',
    },
    netPrice: '899.16',
    isShopArticle: true,
    userGroup: 'public',
    category: 'sets',
    bom: [
      { position: 1, defaultArticle: ARTICLE_NUMBERS.bsf8, valid: [ARTICLE_NUMBERS.bsf8], quantity: 5, locked: true },
      {
        position: 2,
        defaultArticle: ARTICLE_NUMBERS.siac,
        valid: [ARTICLE_NUMBERS.siac, ARTICLE_NUMBERS.siCard10],
        configurable: true,
        configuration: { feedbackSignal: 'beepAndFlash' },
        excluded: ['personalDataFirstName', 'personalDataLastName'],
      },
      { position: 3, defaultArticle: ARTICLE_NUMBERS.cardHolder, valid: [ARTICLE_NUMBERS.cardHolder, ARTICLE_NUMBERS.cardHolderWrist] },
      { position: 4, defaultArticle: ARTICLE_NUMBERS.stationBattery, valid: [ARTICLE_NUMBERS.stationBattery], quantity: 5, locked: true },
    ],
  },
  {
    articleNumber: ARTICLE_NUMBERS.siacStarter,
    name: { en: 'SIAC starter kit', de: 'SIAC Starterpaket', fr: 'Kit de démarrage SIAC' },
    description: {
      en: 'A personalised SIAC with a card holder of your choice and an optional wrist holder.',
      de: 'Eine personalisierte SIAC mit Kartenhalter nach Wahl und optionalem Handgelenkhalter.',
      fr: 'Une SIAC personnalisée avec un support de carte au choix et un support de poignet en option.',
    },
    netPrice: '52.94',
    isShopArticle: true,
    userGroup: 'public',
    category: 'sets',
    bom: [
      {
        position: 1,
        defaultArticle: ARTICLE_NUMBERS.siac,
        valid: [ARTICLE_NUMBERS.siac],
        configurable: true,
        configuration: { feedbackSignal: 'beepAndFlash' },
      },
      { position: 2, defaultArticle: ARTICLE_NUMBERS.cardHolder, valid: [ARTICLE_NUMBERS.cardHolder, ARTICLE_NUMBERS.cardHolderWrist] },
      { position: 3, defaultArticle: ARTICLE_NUMBERS.cardHolderWrist, valid: [ARTICLE_NUMBERS.cardHolderWrist], optional: true },
    ],
  },
  {
    articleNumber: ARTICLE_NUMBERS.spareBoard,
    name: { en: 'BSF8 spare circuit board', de: 'BSF8 Ersatzplatine', fr: 'Carte électronique de rechange BSF8' },
    description: {
      en: 'Workshop spare part; not sold in the shop.',
      de: 'Werkstatt-Ersatzteil; nicht im Shop erhältlich.',
      fr: 'Pièce de rechange atelier ; non vendue en boutique.',
    },
    netPrice: '42.00',
    isShopArticle: false,
    userGroup: 'internal',
    category: 'spare-parts',
  },
  {
    articleNumber: ARTICLE_NUMBERS.centerSubscription,
    name: { en: 'SPORTident Center LTE subscription, 1 year', de: 'SPORTident Center LTE-Abo, 1 Jahr', fr: 'Abonnement SPORTident Center LTE, 1 an' },
    description: {
      en: 'Timing-data service for one LTE modem or reader app for one year; offered by quotation.',
      de: 'Zeitmessdaten-Dienst für ein LTE-Modem oder eine Reader-App für ein Jahr; per Angebot.',
      fr: 'Service de données de chronométrage pour un modem LTE ou une application de lecture pendant un an ; sur devis.',
    },
    netPrice: '99.00',
    isShopArticle: true,
    userGroup: 'internal',
    category: 'subscriptions',
    service: true,
  },
  {
    articleNumber: ARTICLE_NUMBERS.shipping,
    name: { en: 'Shipping', de: 'Versand', fr: 'Expédition' },
    description: { en: 'Shipping costs.', de: 'Versandkosten.', fr: "Frais d'expédition." },
    netPrice: '0.00',
    isShopArticle: false,
    userGroup: 'internal',
    category: 'services',
    service: true,
  },
];

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
const SEED_CUSTOMERS: readonly SeedCustomer[] = [
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
const SEED_INVOICES: readonly SeedInvoice[] = [
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

/** German standard VAT rate in percent, applied to every demo amount. */
export const VAT_RATE_PERCENT = 19;

/** Time zone of the tenant: document dates are local midnight there. */
export const TENANT_TIME_ZONE = 'Europe/Berlin';

/** Offset of `timeZone` from UTC at instant `utcMs`, in ms (positive east of Greenwich). */
function zoneOffsetMs(timeZone: string, utcMs: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - Math.floor(utcMs / 1000) * 1000;
}

/** Epoch ms of local midnight of `YYYY-MM-DD` in `timeZone`. */
export function localMidnightMs(date: string, timeZone = TENANT_TIME_ZONE): number {
  const [y, m, d] = date.split('-').map(Number);
  const guess = Date.UTC(y, m - 1, d);
  const first = guess - zoneOffsetMs(timeZone, guess);
  return guess - zoneOffsetMs(timeZone, first);
}

/** Euros (decimal string) → integer cents. */
function toCents(euros: string | number): number {
  return Math.round(Number(euros) * 100);
}

/** Integer cents → euros with two decimals (`"50.34"`). */
export function toEuros(cents: number): string {
  return (cents / 100).toFixed(2);
}

/** Allocates ids; the seed and the simulator share one sequence per tenant so ids never collide. */
export type IdAllocator = () => string;

function defs(nextId: IdAllocator, now: number): CustomAttributeDefinition[] {
  const def = (
    attributeKey: string,
    label: string,
    attributeType: CustomAttributeDefinition['attributeType'],
    entities: string[],
    values: readonly string[] = [],
  ): CustomAttributeDefinition => ({
    id: nextId(),
    version: '0',
    attributeKey,
    label,
    attributeType,
    entities,
    selectableValues: values.map((value) => ({ id: nextId(), value })),
    active: true,
    createdDate: now,
    lastModifiedDate: now,
  });
  const k = ATTRIBUTE_KEYS;
  return [
    def(k.shopArticle, 'Shop article', 'BOOLEAN', ['article']),
    def(k.shopUserGroup, 'Shop user group', 'LIST', ['article'], USER_GROUPS),
    def(k.shopCategory, 'Shop category', 'LIST', ['article'], CATEGORIES),
    def(k.shopCardType, 'Card type', 'LIST', ['article'], CARD_TYPES),
    def(k.shopSubitemOnly, 'Shop: sub item only', 'BOOLEAN', ['article']),
    def(k.shopConfigurableAttributes, 'Shop: configuration fields', 'STRING', ['article']),
    def(k.retailer, 'Retailer', 'BOOLEAN', ['customer']),
    def(k.retailerPublic, 'Retailer: public listing', 'BOOLEAN', ['customer']),
    def(k.retailerServedCountries, 'Retailer: served countries', 'STRING', ['customer']),
    def(k.shopReference, 'Shop reference', 'STRING', ['salesOrder', 'quotation']),
    def(k.shopSetConfiguration, 'Shop: set configurator', 'LARGE_TEXT', ['article']),
  ];
}

/** Builds the custom attribute value of definition `key` from a plain value (select values by text). */
export function attributeValue(definitions: Iterable<CustomAttributeDefinition>, key: string, value: boolean | string) {
  const def = [...definitions].find((d) => d.attributeKey === key);
  if (!def) throw new Error(`unknown custom attribute ${key}`);
  if (def.attributeType === 'BOOLEAN') return { attributeDefinitionId: def.id, booleanValue: Boolean(value) };
  if (def.attributeType === 'LIST') {
    const sel = (def.selectableValues ?? []).find((v) => v.value === value);
    if (!sel) throw new Error(`custom attribute ${key} has no value ${String(value)}`);
    return { attributeDefinitionId: def.id, selectedValueId: sel.id };
  }
  return { attributeDefinitionId: def.id, stringValue: String(value) };
}

/** Builds a tenant's entities from the seed; `now` stamps created/modified dates. */
export function seedTenant(nextId: IdAllocator, now: number): TenantData {
  const data: TenantData = {
    article: new Map(),
    customer: new Map(),
    salesOrder: new Map(),
    quotation: new Map(),
    salesInvoice: new Map(),
    customAttributeDefinition: new Map(),
    currency: new Map(),
    tax: new Map(),
  };
  for (const [id, name, currencySymbol] of [
    [CURRENCY_ID_EUR, 'EUR', '€'],
    [CURRENCY_ID_CHF, 'CHF', 'CHF'],
  ] as const) {
    data.currency.set(id, { id, version: '0', name, currencySymbol, createdDate: now, lastModifiedDate: now });
  }
  for (const t of SEED_TAXES) data.tax.set(t.id, { ...t, version: '0', createdDate: now, lastModifiedDate: now });
  for (const d of defs(nextId, now)) data.customAttributeDefinition.set(d.id, d);
  const definitions = [...data.customAttributeDefinition.values()];
  const attr = (key: string, value: boolean | string) => attributeValue(definitions, key, value);

  const byNumber = new Map<string, Article>();
  for (const s of SEED_ARTICLES) {
    const customAttributes = [
      attr(ATTRIBUTE_KEYS.shopArticle, s.isShopArticle),
      attr(ATTRIBUTE_KEYS.shopUserGroup, s.userGroup),
      attr(ATTRIBUTE_KEYS.shopCategory, s.category),
    ];
    if (s.cardType) customAttributes.push(attr(ATTRIBUTE_KEYS.shopCardType, s.cardType));
    if (s.subitemOnly) customAttributes.push(attr(ATTRIBUTE_KEYS.shopSubitemOnly, true));
    if (s.configurableAttributes) customAttributes.push(attr(ATTRIBUTE_KEYS.shopConfigurableAttributes, s.configurableAttributes.join(',')));
    const article: Article = {
      id: nextId(),
      version: '0',
      articleNumber: s.articleNumber,
      name: s.name.en,
      description: s.description.en,
      active: true,
      articleType: s.bom ? 'SALES_BILL_OF_MATERIAL' : s.service ? 'SERVICE' : 'STORABLE',
      unitId: UNIT_ID_PIECE,
      taxRateType: 'STANDARD',
      articlePrices: [
        {
          id: nextId(),
          price: s.netPrice,
          currencyId: CURRENCY_ID_EUR,
          currencyName: 'EUR',
          priceScaleType: 'SCALE_FROM',
          priceScaleValue: '1',
          salesChannel: 'NET1',
        },
      ],
      customAttributes,
      salesBillOfMaterialItems: [],
      translations: (['de', 'fr'] as const).map((locale) => ({ locale, name: s.name[locale], description: s.description[locale] })),
      createdDate: now,
      lastModifiedDate: now,
    };
    byNumber.set(s.articleNumber, article);
    data.article.set(article.id, article);
  }
  for (const s of SEED_ARTICLES) {
    const article = byNumber.get(s.articleNumber)!;
    article.salesBillOfMaterialItems = (s.bom ?? []).map((b) => ({
      id: nextId(),
      positionNumber: b.position,
      articleId: byNumber.get(b.defaultArticle)!.id,
      articleNumber: b.defaultArticle,
      quantity: String(b.quantity ?? 1),
      createdDate: now,
      lastModifiedDate: now,
      version: '0',
    }));
    if (s.bom) {
      const slots: ErpSetSlotConfiguration[] = s.bom.map((b) => ({
        positionNumber: b.position,
        locked: b.locked ?? false,
        configurable: b.configurable ?? false,
        optional: b.optional ?? false,
        validArticleNumbers: b.valid,
        defaultConfiguration: b.configuration ?? {},
        excludedCustomAttributes: b.excluded ?? [],
      }));
      article.customAttributes!.push(attr(ATTRIBUTE_KEYS.shopSetConfiguration, JSON.stringify(slots)));
    }
  }

  const customers = new Map<string, Customer>();
  for (const c of SEED_CUSTOMERS) {
    const customAttributes = [attr(ATTRIBUTE_KEYS.retailer, c.retailer)];
    if (c.retailer) {
      customAttributes.push(attr(ATTRIBUTE_KEYS.retailerPublic, c.retailerPublic ?? false));
      customAttributes.push(attr(ATTRIBUTE_KEYS.retailerServedCountries, (c.servedCountries ?? []).join(',')));
    }
    const addressId = nextId();
    const customer: Customer = {
      id: nextId(),
      primaryAddressId: addressId,
      version: '0',
      customerNumber: c.customerNumber,
      partyType: 'ORGANIZATION',
      company: c.company,
      email: c.email,
      phone: c.phone,
      ...(c.website ? { website: c.website } : {}),
      customer: true,
      customerBlocked: false,
      addresses: [
        {
          id: addressId,
          street1: c.street1,
          ...(c.street2 ? { street2: c.street2 } : {}),
          zipcode: c.zipcode,
          city: c.city,
          ...(c.state ? { state: c.state } : {}),
          countryCode: c.countryCode,
          deliveryAddress: true,
          invoiceAddress: true,
        },
      ],
      customAttributes,
      createdDate: now,
      lastModifiedDate: now,
    };
    customers.set(c.customerNumber, customer);
    data.customer.set(customer.id, customer);
  }

  for (const inv of SEED_INVOICES) {
    const customer = customers.get(inv.customerNumber)!;
    const items = inv.items.map((it, i) => {
      const a = byNumber.get(it.articleNumber)!;
      const unit = toCents(a.articlePrices![0].price);
      return {
        id: nextId(),
        positionNumber: i + 1,
        articleId: a.id,
        articleNumber: a.articleNumber,
        title: a.name,
        quantity: String(it.quantity),
        unitPrice: toEuros(unit),
        netAmount: toEuros(unit * it.quantity),
      };
    });
    const net = items.reduce((sum, it) => sum + toCents(it.netAmount), 0);
    const tax = Math.round((net * VAT_RATE_PERCENT) / 100);
    const invoiceDate = localMidnightMs(inv.date);
    const invoice: SalesInvoice = {
      id: nextId(),
      version: '0',
      invoiceNumber: inv.invoiceNumber,
      invoiceDate,
      customerId: customer.id,
      customerNumber: customer.customerNumber,
      status: inv.status ?? 'OPEN_ITEM_CREATED',
      salesInvoiceItems: items,
      netAmount: toEuros(net),
      grossAmount: toEuros(net + tax),
      createdDate: invoiceDate,
      lastModifiedDate: invoiceDate,
    };
    data.salesInvoice.set(invoice.id, invoice);
  }
  return data;
}
