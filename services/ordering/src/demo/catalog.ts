/**
 * Demo catalogue (loaded at start when `DEMO_DATA` is on; idempotent upsert in one transaction): a
 * SPORTident-style shop that exercises every catalogue rule until the ERP import fills the
 * tables: cards of each type with personalisation, stations, a retailer-only and an internal-only
 * article, sub-item-only accessories, a non-shop spare part, and sets with locked, configurable,
 * choosable and optional slots. Also the two real battery records of docs/decisions.md §6.
 *
 * Prices: net, integer cents, EUR, VAT 19 % (German rate; the shop is operated from Germany).
 */
import type { Kysely } from 'kysely';
import type { UserGroup } from '../auth/principal';
import type { DB } from '../db/schema';
import type { CardType } from '../siid/card-types';
import * as catalogRepo from '../catalog/catalog.repository';
import type { AttributeDefinition, LocalizedText } from '../db/tables/catalog.tables';
import { upsertBatteryRecords } from '../battery/battery.repository';

/** A demo BOM slot (position = `articleBomItemOid`). */
interface DemoSlot {
  position: number;
  defaultArticle: string;
  valid: string[];
  quantity?: number;
  configuration?: Record<string, string>;
  isLocked?: boolean;
  isConfigurable?: boolean;
  isOptional?: boolean;
  excluded?: string[];
}

/** A demo article. */
interface DemoArticle {
  number: string;
  name: LocalizedText;
  description: LocalizedText;
  category: string;
  netPriceCents: number;
  userGroup?: UserGroup;
  isShopArticle?: boolean;
  cardType?: CardType;
  isSubitemOnly?: boolean;
  attributes?: AttributeDefinition[];
  bom?: DemoSlot[];
}

const VAT_RATE_PERCENT = 19;

const cardNumber: AttributeDefinition = { key: 'cardNumber', type: 'text', required: false, maxLength: 7, options: [], defaultValue: null };
const firstName: AttributeDefinition = { key: 'personalDataFirstName', type: 'text', required: false, maxLength: 20, options: [], defaultValue: null };
const lastName: AttributeDefinition = { key: 'personalDataLastName', type: 'text', required: false, maxLength: 20, options: [], defaultValue: null };
const feedbackSignal: AttributeDefinition = {
  key: 'feedbackSignal',
  type: 'select',
  required: true,
  maxLength: null,
  options: ['beepAndFlash', 'flashOnly', 'beepOnly', 'silent'],
  defaultValue: 'beepAndFlash',
};

/** The demo articles, in catalogue order. */
export const DEMO_ARTICLES: readonly DemoArticle[] = [
  {
    number: 'SIAC1',
    name: { en: 'SIAC', de: 'SIAC', fr: 'SIAC' },
    description: {
      en: 'Active contactless timing card (Air+), 128 punches, battery-powered, personalisable.',
      de: 'Aktive kontaktlose Zeitmesskarte (Air+), 128 Posten, batteriebetrieben, personalisierbar.',
      fr: 'Carte de chronométrage active sans contact (Air+), 128 postes, à pile, personnalisable.',
    },
    category: 'cards',
    netPriceCents: 5_034,
    cardType: 'siac1',
    attributes: [cardNumber, feedbackSignal, firstName, lastName],
  },
  {
    number: 'SI-CARD10',
    name: { en: 'SI-Card 10', de: 'SI-Card 10', fr: 'SI-Card 10' },
    description: {
      en: 'Timing card with 128 punches, personalisable.',
      de: 'Zeitmesskarte mit 128 Posten, personalisierbar.',
      fr: 'Carte de chronométrage, 128 postes, personnalisable.',
    },
    category: 'cards',
    netPriceCents: 3_353,
    cardType: 'sicard10',
    attributes: [cardNumber, firstName, lastName],
  },
  {
    number: 'SI-CARD9',
    name: { en: 'SI-Card 9', de: 'SI-Card 9', fr: 'SI-Card 9' },
    description: {
      en: 'Entry-level timing card with 50 punches, personalisable.',
      de: 'Einsteiger-Zeitmesskarte mit 50 Posten, personalisierbar.',
      fr: "Carte de chronométrage d'entrée de gamme, 50 postes, personnalisable.",
    },
    category: 'cards',
    netPriceCents: 2_092,
    cardType: 'sicard9',
    attributes: [cardNumber, firstName, lastName],
  },
  {
    number: 'BSF8',
    name: { en: 'BSF8 control station', de: 'BSF8 Poststation', fr: 'Boîtier de contrôle BSF8' },
    description: {
      en: 'Control station with Air+ for SIAC, battery-powered.',
      de: 'Poststation mit Air+ für SIAC, batteriebetrieben.',
      fr: 'Boîtier de contrôle avec Air+ pour SIAC, à pile.',
    },
    category: 'stations',
    netPriceCents: 16_723,
  },
  {
    number: 'BS11-BL',
    name: { en: 'BS11 large station (loop antenna)', de: 'BS11 Großstation (Schleifenantenne)', fr: 'Grand boîtier BS11 (antenne boucle)' },
    description: {
      en: 'Finish and start station with loop antenna for contactless SIAC punching at a distance.',
      de: 'Ziel- und Startstation mit Schleifenantenne für kontaktloses Stempeln mit SIAC auf Distanz.',
      fr: "Boîtier d'arrivée et de départ avec antenne boucle pour pointage SIAC à distance.",
    },
    category: 'stations',
    netPriceCents: 41_933,
  },
  {
    number: 'BSM8-USB',
    name: { en: 'BSM8 master station (USB)', de: 'BSM8 Masterstation (USB)', fr: 'Boîtier maître BSM8 (USB)' },
    description: {
      en: 'Reads cards into the timing software on a PC.',
      de: 'Liest Karten in die Auswertungssoftware am PC ein.',
      fr: 'Lit les cartes dans le logiciel de chronométrage sur PC.',
    },
    category: 'stations',
    netPriceCents: 14_201,
  },
  {
    number: 'BSF8-PACK10',
    name: { en: 'BSF8 control station, retailer pack of 10', de: 'BSF8 Poststation, Händlerpaket à 10', fr: 'Boîtier BSF8, lot revendeur de 10' },
    description: { en: 'Ten BSF8 control stations for resale.', de: 'Zehn BSF8 Poststationen zum Wiederverkauf.', fr: 'Dix boîtiers BSF8 pour la revente.' },
    category: 'stations',
    netPriceCents: 150_420,
    userGroup: 'retailer',
  },
  {
    number: 'SIAC-BATTERY-SERVICE',
    name: { en: 'SIAC battery replacement (service)', de: 'SIAC Batteriewechsel (Service)', fr: 'Remplacement de pile SIAC (service)' },
    description: {
      en: 'Battery replacement of a returned SIAC by the service department.',
      de: 'Batteriewechsel einer eingesandten SIAC durch den Service.',
      fr: "Remplacement de la pile d'une SIAC retournée par le service.",
    },
    category: 'services',
    netPriceCents: 1_260,
    userGroup: 'internal',
  },
  {
    number: 'CARD-HOLDER',
    name: { en: 'Finger card holder', de: 'Fingerhalter für Karten', fr: 'Support de carte au doigt' },
    description: {
      en: 'Elastic finger strap for SI-Cards and SIAC.',
      de: 'Elastische Fingerschlaufe für SI-Cards und SIAC.',
      fr: 'Sangle élastique au doigt pour SI-Cards et SIAC.',
    },
    category: 'accessories',
    netPriceCents: 210,
    isSubitemOnly: true,
  },
  {
    number: 'CARD-HOLDER-WRIST',
    name: { en: 'Wrist card holder', de: 'Handgelenkhalter für Karten', fr: 'Support de carte au poignet' },
    description: { en: 'Wrist strap for SI-Cards and SIAC.', de: 'Handgelenkband für SI-Cards und SIAC.', fr: 'Bracelet pour SI-Cards et SIAC.' },
    category: 'accessories',
    netPriceCents: 294,
    isSubitemOnly: true,
  },
  {
    number: 'BAT-BSF8',
    name: { en: 'Station battery (3.6 V lithium)', de: 'Stationsbatterie (3,6 V Lithium)', fr: 'Pile de boîtier (lithium 3,6 V)' },
    description: { en: 'Replacement battery for BSF8 stations.', de: 'Ersatzbatterie für BSF8 Stationen.', fr: 'Pile de rechange pour boîtiers BSF8.' },
    category: 'accessories',
    netPriceCents: 832,
    isSubitemOnly: true,
  },
  {
    number: 'TRAINING-SET',
    name: { en: 'Training set', de: 'Trainingsset', fr: "Kit d'entraînement" },
    description: {
      en: 'Five BSF8 control stations with spare batteries, a personalisable card of your choice and a card holder.',
      de: 'Fünf BSF8 Poststationen mit Ersatzbatterien, eine personalisierbare Karte nach Wahl und ein Kartenhalter.',
      fr: 'Cinq boîtiers BSF8 avec piles de rechange, une carte personnalisable au choix et un support de carte.',
    },
    category: 'sets',
    netPriceCents: 89_916,
    bom: [
      { position: 1, defaultArticle: 'BSF8', valid: ['BSF8'], quantity: 5, isLocked: true },
      {
        position: 2,
        defaultArticle: 'SIAC1',
        valid: ['SIAC1', 'SI-CARD10'],
        isConfigurable: true,
        configuration: { feedbackSignal: 'beepAndFlash' },
        // The set's card is the trainer's: no runner name is printed on it.
        excluded: ['personalDataFirstName', 'personalDataLastName'],
      },
      { position: 3, defaultArticle: 'CARD-HOLDER', valid: ['CARD-HOLDER', 'CARD-HOLDER-WRIST'] },
      { position: 4, defaultArticle: 'BAT-BSF8', valid: ['BAT-BSF8'], quantity: 5, isLocked: true },
    ],
  },
  {
    number: 'SIAC-STARTER',
    name: { en: 'SIAC starter kit', de: 'SIAC Starterpaket', fr: 'Kit de démarrage SIAC' },
    description: {
      en: 'A personalised SIAC with a card holder of your choice and an optional wrist holder.',
      de: 'Eine personalisierte SIAC mit Kartenhalter nach Wahl und optionalem Handgelenkhalter.',
      fr: 'Une SIAC personnalisée avec un support de carte au choix et un support de poignet en option.',
    },
    category: 'sets',
    netPriceCents: 5_294,
    bom: [
      { position: 1, defaultArticle: 'SIAC1', valid: ['SIAC1'], isConfigurable: true, configuration: { feedbackSignal: 'beepAndFlash' } },
      { position: 2, defaultArticle: 'CARD-HOLDER', valid: ['CARD-HOLDER', 'CARD-HOLDER-WRIST'] },
      { position: 3, defaultArticle: 'CARD-HOLDER-WRIST', valid: ['CARD-HOLDER-WRIST'], isOptional: true },
    ],
  },
  {
    number: 'SPARE-PCB-BSF8',
    name: { en: 'BSF8 spare circuit board', de: 'BSF8 Ersatzplatine', fr: 'Carte électronique de rechange BSF8' },
    description: {
      en: 'Workshop spare part; not sold in the shop.',
      de: 'Werkstatt-Ersatzteil; nicht im Shop erhältlich.',
      fr: 'Pièce de rechange atelier ; non vendue en boutique.',
    },
    category: 'spare-parts',
    netPriceCents: 4_200,
    isShopArticle: false,
  },
  {
    // Sold by quotation only (center/create-quotation-for-subscription): present from the first start, as the
    // ERP simulator's seed has it, so the README's quotation works before any import-articles.
    number: 'CENTER-LTE-1Y',
    name: { en: 'SPORTident Center LTE subscription, 1 year', de: 'SPORTident Center LTE-Abo, 1 Jahr', fr: 'Abonnement SPORTident Center LTE, 1 an' },
    description: {
      en: 'Timing-data service for one LTE modem or reader app for one year; offered by quotation.',
      de: 'Zeitmessdaten-Dienst für ein LTE-Modem oder eine Reader-App für ein Jahr; per Angebot.',
      fr: 'Service de données de chronométrage pour un modem LTE ou une application de lecture pendant un an ; sur devis.',
    },
    category: 'subscriptions',
    netPriceCents: 9_900,
    userGroup: 'internal',
  },
];

/** Real battery records (docs/decisions.md §6): card → battery date. */
export const DEMO_BATTERY_RECORDS: readonly { cardNumber: number; batteryDate: string | null }[] = [
  { cardNumber: 8_621_484, batteryDate: '2020-01-15' },
  { cardNumber: 8_549_150, batteryDate: '2026-07-01' },
];

/** Upserts the demo catalogue and battery records (safe to run on every start). */
export async function loadDemoCatalog(db: Kysely<DB>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const [i, a] of DEMO_ARTICLES.entries()) {
      await catalogRepo.upsertArticle(trx, {
        article_number: a.number,
        erp_id: null,
        erp_version: null,
        is_shop_article: a.isShopArticle ?? true,
        user_group: a.userGroup ?? 'public',
        category: a.category,
        name: JSON.stringify(a.name),
        description: JSON.stringify(a.description),
        net_price_cents: a.netPriceCents,
        currency: 'EUR',
        vat_rate_percent: VAT_RATE_PERCENT,
        card_type: a.cardType ?? null,
        is_subitem_only: a.isSubitemOnly ?? false,
        configurable_attributes: JSON.stringify(a.attributes ?? []),
        image_url: null,
        sort_order: (i + 1) * 10,
      });
    }
    // Slots reference articles by number: insert them once every article exists.
    for (const a of DEMO_ARTICLES) {
      await catalogRepo.replaceBomItems(
        trx,
        a.number,
        (a.bom ?? []).map((s) => ({
          main_article_number: a.number,
          position: s.position,
          default_article_number: s.defaultArticle,
          valid_article_numbers: s.valid,
          quantity: s.quantity ?? 1,
          default_configuration: JSON.stringify(s.configuration ?? {}),
          is_locked: s.isLocked ?? false,
          is_configurable: s.isConfigurable ?? false,
          is_optional: s.isOptional ?? false,
          excluded_custom_attributes: s.excluded ?? [],
        })),
      );
    }
    await upsertBatteryRecords(
      trx,
      DEMO_BATTERY_RECORDS.map((r) => r.cardNumber),
      DEMO_BATTERY_RECORDS.map((r) => r.batteryDate),
    );
  });
}
