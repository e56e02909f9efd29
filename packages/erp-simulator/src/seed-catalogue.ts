/**
 * The demo catalogue of the ERP simulator: stable article numbers and the shop's articles (cards, stations,
 * accessories, sets with their bills of materials, services). Article numbers are stable strings: the ordering
 * service's demo catalogue and tests refer to them (import these constants rather than repeating the strings).
 * Prices are net euros as decimal strings, like weclapp.
 */

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

/** Values of the LIST attribute `shopUserGroup`. */
export const USER_GROUPS = ['public', 'retailer', 'internal'] as const;
/** Values of the LIST attribute `shopCategory`. */
export const CATEGORIES = ['cards', 'stations', 'accessories', 'sets', 'services', 'spare-parts', 'subscriptions'] as const;
/** Values of the LIST attribute `shopCardType`. */
export const CARD_TYPES = ['sicard9', 'sicard10', 'siac1'] as const;

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
