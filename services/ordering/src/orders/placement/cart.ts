/**
 * The cart of an order: every requested item checked against the catalogue and priced (`createShopOrder`:
 * articles, availability, quantities, BOM slots, configuration, card numbers, prices). Shared by order placement
 * and discount-code validation, so a code is always judged against the same prices the order will have. Money:
 * integer net cents.
 */
import { addFieldError, validationError, type FieldErrors } from '@sports-timing/shared';
import type { UserGroup } from '../../auth/principal';
import type { CatalogArticle, CatalogBomItem } from '../../catalog/catalog.mapper';
import type { CartArticleCache } from '../../catalog/catalog-caches';
import type { AttributeDefinition } from '../../db/tables/catalog.tables';
import { isAvailableTo } from '../../catalog/user-groups';
import { CARD_NUMBER_RANGES, isInRange, type CardType } from '../../siid/card-types';
import type { OrderItemInput, OrderItemPaths } from '../order.types';

/** The configuration key holding a personalised card number (spec `ConfigurableAttribute`). */
export const CARD_NUMBER_KEY = 'cardNumber';

/** One priced line of the cart: a main item or a sub item. */
export interface CartLine {
  /** Index of the main line this sub item belongs to (in `PricedCart.lines`); null for main items. */
  parentIndex: number | null;
  lineNo: number;
  paths: OrderItemPaths;
  article: CatalogArticle;
  /** Quantity as ordered; for sub items per main item. */
  quantity: number;
  /** Units actually delivered: quantity (× the main item's quantity for sub items). */
  effectiveQuantity: number;
  /** Configuration with the slot's and the attributes' defaults applied. */
  configuration: Record<string, string>;
  articleBomItemOid: number;
  /** Net unit price charged, cents (sub items: 0, a surcharge, or the full price; see the spec). */
  unitNetPriceCents: number;
  /** `unitNetPriceCents × effectiveQuantity`, cents. */
  netAmountCents: number;
  vatRatePercent: number;
  cardType: CardType | null;
  /** Requested personalised card number, or null. */
  cardNumber: number | null;
  /** Whether a random free number is to be claimed for this line (card orders). */
  assignRandomCardNumber: boolean;
}

/** A validated, priced cart. */
export interface PricedCart {
  /** Main items, each followed by its sub items. */
  lines: CartLine[];
  /** Σ `netAmountCents`, before discounts. */
  itemsNetCents: number;
  /** ISO 4217, shared by all articles of the cart. */
  currency: string;
}

class Errors {
  readonly fields: FieldErrors = {};
  add(field: string, message: string): void {
    addFieldError(this.fields, field, message);
  }
  get empty(): boolean {
    return Object.keys(this.fields).length === 0;
  }
}

function allArticleNumbers(items: readonly OrderItemInput[], articles: Set<string> = new Set()): Set<string> {
  for (const item of items) {
    articles.add(item.articleNumber);
    allArticleNumbers(item.subitems, articles);
  }
  return articles;
}

function checkValue(def: AttributeDefinition, value: string): string | null {
  switch (def.type) {
    case 'select':
      return def.options.includes(value) ? null : `must be one of ${def.options.join(', ')}`;
    case 'boolean':
      return value === 'true' || value === 'false' ? null : 'must be "true" or "false"';
    case 'text':
      if (value.trim() !== value || value.length === 0) return 'must be a non-empty text without leading or trailing spaces';
      if (/[\p{Cc}]/u.test(value)) return 'must not contain control characters';
      return def.maxLength !== null && [...value].length > def.maxLength ? `must be at most ${def.maxLength} characters` : null;
  }
}

interface ConfigRules {
  article: CatalogArticle;
  /** Configuration before the customer's values (a slot's preset). */
  preset: Record<string, string>;
  /** Keys the customer may set; others must be absent or equal the preset. */
  changeable: ReadonlySet<string>;
  /** Keys that do not apply (slot exclusions): never set, no defaults. */
  excluded: ReadonlySet<string>;
  /** Why a key outside `changeable` is refused. */
  lockedReason: string;
}

function resolveConfiguration(sent: Record<string, string>, rules: ConfigRules, paths: OrderItemPaths, errors: Errors): Record<string, string> {
  const defs = new Map(rules.article.attributes.map((d) => [d.key, d]));
  const field = (key: string) => (key === CARD_NUMBER_KEY ? paths.cardNumber : `${paths.item}.configuration.${key}`);
  const result: Record<string, string> = { ...rules.preset };
  for (const [key, value] of Object.entries(sent)) {
    const def = defs.get(key);
    if (!def) {
      errors.add(field(key), `${rules.article.articleNumber} has no option ${key}.`);
      continue;
    }
    if (rules.excluded.has(key)) {
      errors.add(field(key), `${key} does not apply to ${rules.article.articleNumber} in this set.`);
      continue;
    }
    if (!rules.changeable.has(key)) {
      if (rules.preset[key] !== value) errors.add(field(key), rules.lockedReason);
      continue;
    }
    const problem = checkValue(def, value);
    if (problem) errors.add(field(key), `${key} ${problem}.`);
    else result[key] = value;
  }
  for (const def of rules.article.attributes) {
    if (rules.excluded.has(def.key) || result[def.key] !== undefined) continue;
    if (def.defaultValue !== null) result[def.key] = def.defaultValue;
    else if (def.required) errors.add(field(def.key), `${def.key} is required for ${rules.article.articleNumber}.`);
  }
  return result;
}

/** The requested card number of a line, validated against the article's card type; null when none. */
function cardNumberOf(line: Pick<CartLine, 'article' | 'configuration' | 'effectiveQuantity' | 'paths'>, errors: Errors): number | null {
  const raw = line.configuration[CARD_NUMBER_KEY];
  if (raw === undefined) return null;
  const { article, paths } = line;
  if (!article.cardType) {
    errors.add(paths.cardNumber, `${article.articleNumber} is not a card article.`);
    return null;
  }
  const range = CARD_NUMBER_RANGES[article.cardType];
  const n = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!isInRange(article.cardType, n)) {
    errors.add(paths.cardNumber, `${raw} is not a ${article.cardType} card number (${range.first}–${range.last}).`);
    return null;
  }
  if (line.effectiveQuantity !== 1) {
    errors.add(`${paths.item}.quantity`, 'An item with a card number must have quantity 1.');
    return null;
  }
  return n;
}

function subitemPrice(slot: CatalogBomItem, chosen: CatalogArticle, byNumber: ReadonlyMap<string, CatalogArticle>): number {
  if (slot.isOptional) return chosen.netPriceCents;
  if (chosen.articleNumber === slot.defaultArticleNumber) return 0;
  const standard = byNumber.get(slot.defaultArticleNumber)?.netPriceCents ?? 0;
  return Math.max(0, chosen.netPriceCents - standard);
}

/**
 * Checks and prices `items` for a caller of `group` against the catalogue `byNumber` (pure). Returns the
 * cart and the field errors found (all of them, not only the first); the cart is meaningful only when
 * there are none. `itemsPath` names the items array in errors about the cart as a whole.
 */
export function buildCart(
  items: readonly OrderItemInput[],
  byNumber: ReadonlyMap<string, CatalogArticle>,
  group: UserGroup,
  itemsPath: string,
): { cart: PricedCart; errors: FieldErrors } {
  const errors = new Errors();
  const lines: CartLine[] = [];
  const claimedNumbers = new Map<number, string>();
  const noteCardNumber = (line: CartLine) => {
    if (line.cardNumber === null) return;
    const first = claimedNumbers.get(line.cardNumber);
    if (first) errors.add(line.paths.cardNumber, `Card number ${line.cardNumber} is already requested by ${first}.`);
    else claimedNumbers.set(line.cardNumber, line.paths.item);
  };

  for (const item of items) {
    const article = byNumber.get(item.articleNumber);
    const at = item.paths.articleNumber;
    if (!article) {
      errors.add(at, `Unknown article ${item.articleNumber}.`);
      continue;
    }
    if (!article.isShopArticle) {
      errors.add(at, `${item.articleNumber} is not sold in the shop.`);
      continue;
    }
    if (!isAvailableTo(article.userGroup, group)) {
      errors.add(at, `${item.articleNumber} is not available to your user group.`);
      continue;
    }
    if (article.isSubitemOnly) {
      errors.add(at, `${item.articleNumber} can only be ordered as part of a set.`);
      continue;
    }
    if (item.articleBomItemOid !== 0) errors.add(`${item.paths.item}.articleBomItemOid`, 'must be 0 for a main item.');
    const configuration = resolveConfiguration(
      item.configuration,
      { article, preset: {}, changeable: new Set(article.attributes.map((a) => a.key)), excluded: new Set(), lockedReason: '' },
      item.paths,
      errors,
    );
    const main: CartLine = {
      parentIndex: null,
      lineNo: item.lineNo,
      paths: item.paths,
      article,
      quantity: item.quantity,
      effectiveQuantity: item.quantity,
      configuration,
      articleBomItemOid: 0,
      unitNetPriceCents: article.netPriceCents,
      netAmountCents: article.netPriceCents * item.quantity,
      vatRatePercent: article.vatRatePercent,
      cardType: article.cardType,
      cardNumber: null,
      assignRandomCardNumber: item.assignRandomCardNumber,
    };
    main.cardNumber = cardNumberOf(main, errors);
    noteCardNumber(main);
    if (item.assignRandomCardNumber && !article.cardType) errors.add(at, `${item.articleNumber} is not a card article.`);
    const mainIndex = lines.push(main) - 1;

    const slots = new Map(article.bomItems.map((s) => [s.position, s]));
    const filled = new Map<number, OrderItemInput>();
    item.subitems.forEach((sub, j) => {
      const subPath = `${item.paths.item}.subitems[${j}]`;
      const slot = slots.get(sub.articleBomItemOid);
      if (!slot) {
        errors.add(`${subPath}.articleBomItemOid`, `${article.articleNumber} has no sub item slot ${sub.articleBomItemOid}.`);
        return;
      }
      if (filled.has(slot.position)) {
        errors.add(`${subPath}.articleBomItemOid`, `Slot ${slot.position} is filled twice.`);
        return;
      }
      filled.set(slot.position, sub);
    });
    for (const slot of article.bomItems) {
      const sub = filled.get(slot.position);
      if (!sub && slot.isOptional) continue;
      const j = sub ? item.subitems.indexOf(sub) : -1;
      const subPaths: OrderItemPaths = sub
        ? sub.paths
        : { item: `${item.paths.item}.subitems`, articleNumber: `${item.paths.item}.subitems`, cardNumber: `${item.paths.item}.subitems` };
      const articleNumber = sub?.articleNumber ?? slot.defaultArticleNumber;
      const where = sub ? `${item.paths.item}.subitems[${j}]` : `${item.paths.item}.subitems`;
      if (sub && sub.subitems.length > 0) errors.add(`${where}.subitems`, 'Sub items cannot have sub items.');
      if (!slot.validArticleNumbers.includes(articleNumber)) {
        errors.add(
          `${where}.articleNumber`,
          `${articleNumber} is not valid in slot ${slot.position} of ${article.articleNumber} (valid: ${slot.validArticleNumbers.join(', ')}).`,
        );
        continue;
      }
      if (slot.isLocked && articleNumber !== slot.defaultArticleNumber) {
        errors.add(`${where}.articleNumber`, `Slot ${slot.position} of ${article.articleNumber} is locked.`);
        continue;
      }
      const quantity = sub?.quantity ?? slot.quantity;
      if (quantity !== slot.quantity) errors.add(`${where}.quantity`, `must be ${slot.quantity} (the quantity of slot ${slot.position}).`);
      const subArticle = byNumber.get(articleNumber);
      if (!subArticle) {
        errors.add(`${where}.articleNumber`, `Unknown article ${articleNumber}.`);
        continue;
      }
      const configurable = slot.isConfigurable && !slot.isLocked;
      const subConfiguration = resolveConfiguration(
        sub?.configuration ?? {},
        {
          article: subArticle,
          preset: slot.defaultConfiguration,
          changeable: configurable ? new Set(subArticle.attributes.map((a) => a.key)) : new Set(),
          excluded: new Set(slot.excludedCustomAttributes),
          lockedReason: `Slot ${slot.position} of ${article.articleNumber} is not configurable.`,
        },
        subPaths,
        errors,
      );
      const unit = subitemPrice(slot, subArticle, byNumber);
      const effectiveQuantity = quantity * item.quantity;
      const line: CartLine = {
        parentIndex: mainIndex,
        lineNo: item.lineNo,
        paths: subPaths,
        article: subArticle,
        quantity,
        effectiveQuantity,
        configuration: subConfiguration,
        articleBomItemOid: slot.position,
        unitNetPriceCents: unit,
        netAmountCents: unit * effectiveQuantity,
        vatRatePercent: subArticle.vatRatePercent,
        cardType: subArticle.cardType,
        cardNumber: null,
        assignRandomCardNumber: false,
      };
      line.cardNumber = cardNumberOf(line, errors);
      noteCardNumber(line);
      lines.push(line);
    }
  }
  const currencies = new Set(lines.map((l) => l.article.currency));
  if (currencies.size > 1) errors.add(itemsPath, `All articles of an order must have one currency (found ${[...currencies].sort().join(', ')}).`);
  const currency = lines[0]?.article.currency ?? 'EUR';
  return { cart: { lines, itemsNetCents: lines.reduce((s, l) => s + l.netAmountCents, 0), currency }, errors: errors.fields };
}

/**
 * The catalogue articles `items` refer to, plus the default articles of their slots (for surcharges), from
 * the app's cart-article cache (`CartArticleCache`: at most a second old, dropped by every article import).
 */
export async function loadCartArticles(cartArticles: CartArticleCache, items: readonly OrderItemInput[]): Promise<Map<string, CatalogArticle>> {
  const byNumber = new Map(await cartArticles.find([...allArticleNumbers(items)]));
  const defaults = [...byNumber.values()].flatMap((a) => a.bomItems.map((s) => s.defaultArticleNumber)).filter((n) => !byNumber.has(n));
  if (defaults.length > 0) for (const [n, a] of await cartArticles.find(defaults)) byNumber.set(n, a);
  return byNumber;
}

/**
 * Loads the articles of `items` (from `cartArticles`) and prices the cart for a caller of `group`; throws
 * ApiError 400 with every field violation when the cart is not valid.
 */
export async function priceCart(cartArticles: CartArticleCache, items: readonly OrderItemInput[], group: UserGroup, itemsPath: string): Promise<PricedCart> {
  const { cart, errors } = buildCart(items, await loadCartArticles(cartArticles, items), group, itemsPath);
  if (Object.keys(errors).length > 0) throw validationError(errors, summarize(errors));
  return cart;
}

/** A one-line message for a Status `message`: the first violation, and how many more there are. */
export function summarize(errors: FieldErrors): string {
  const all = Object.entries(errors).flatMap(([field, msgs]) => msgs.map((m) => `${field}: ${m}`));
  return all.length <= 1 ? (all[0] ?? 'The request is invalid.') : `${all[0]} (and ${all.length - 1} more)`;
}
