/**
 * Handlers of the card-reservation area (ordering spec §4.2; problem+json errors): card products, card
 * configuration, random free numbers, number checks, countries and geo-IP. `createOrder` and
 * `createQuotationForSubscription` belong to the order pipeline and are registered elsewhere.
 */
import { ApiError, principalOf, validationError, type Handlers } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { grossCents } from '../catalog/catalog.mapper';
import { attributeLabeler, cardProducts, findCardArticle } from '../catalog/catalog.service';
import { canonicalCulture, localize, parseAcceptLanguage } from '../culture/culture';
import { effectiveUserGroup, isAvailableTo } from '../catalog/user-groups';
import type { OrderingDeps } from '../context';
import { listCountries } from '../countries/countries.service';
import { geoIpLookup, normalizeIp } from '../countries/geoip';
import type { operations } from '../generated/openapi';
import { CARD_NUMBER_RANGES, cardTypeOfNumber } from '../siid/card-types';
import { checkCardNumber, drawFreeServiceIds } from '../siid/siid.service';

/** Numbers per `get-random-card-numbers` reply (spec `RandomCardNumbersResponse`). */
const RANDOM_CARD_NUMBERS = 10;

/** Card-reservation handlers. */
export function cardReservationHandlers(ctx: OrderingDeps): Handlers<operations> {
  const db = ctx.database.db;
  return {
    async getCardsInfo(req, res) {
      const group = effectiveUserGroup(principalOf<Principal>(res));
      const prefs = parseAcceptLanguage(req.headers['accept-language']);
      const products = await cardProducts(db);
      const cards = [...products].map(([cardType, a]) => ({
        cardType,
        productId: a.articleNumber,
        name: localize(a.names, prefs) ?? a.articleNumber,
        description: localize(a.descriptions, prefs),
        firstCardNumber: CARD_NUMBER_RANGES[cardType].first,
        lastCardNumber: CARD_NUMBER_RANGES[cardType].last,
        netPriceCents: a.netPriceCents,
        grossPriceCents: grossCents(a.netPriceCents, a.vatRatePercent),
        currency: a.currency,
        vatRatePercent: a.vatRatePercent,
        isAvailable: isAvailableTo(a.userGroup, group),
        imageUrl: a.imageUrl,
      }));
      res.json({ cards });
    },
    async getCardConfiguration(req, res) {
      const { cardNumber, culture } = req.query;
      const cardType = cardTypeOfNumber(cardNumber);
      if (!cardType) throw validationError({ cardNumber: [`${cardNumber} is in no card type's range.`] });
      const product = (await cardProducts(db)).get(cardType);
      if (!product) throw new ApiError(404, `No card product of type ${cardType}.`);
      const prefs = culture
        ? [canonicalCulture(culture), ...parseAcceptLanguage(req.headers['accept-language'])]
        : parseAcceptLanguage(req.headers['accept-language']);
      const labeler = await attributeLabeler(db, prefs);
      const check = await checkCardNumber(db, cardNumber);
      res.json({
        cardNumber,
        cardType,
        productId: product.articleNumber,
        culture: labeler.culture,
        isFree: check.isFree,
        attributes: product.attributes.filter((a) => a.key !== 'cardNumber').map((a) => labeler.attribute(a)),
      });
    },
    async getRandomCardNumbers(req, res) {
      const product = await findCardArticle(db, req.query.productId);
      if (!product?.cardType) throw new ApiError(404, `${req.query.productId} is not a card product.`);
      const cardNumbers = await drawFreeServiceIds(db, product.cardType, RANDOM_CARD_NUMBERS);
      res.json({ productId: product.articleNumber, cardType: product.cardType, cardNumbers });
    },
    async isCardFree(req, res) {
      res.json(await checkCardNumber(db, req.query.cardNumber));
    },
    async getCountriesList(req, res) {
      const list = await listCountries(db, parseAcceptLanguage(req.headers['accept-language']));
      res.json(list.countries);
    },
    getCountryFromMyIp(req, res) {
      const raw = req.query.ip;
      // Without `ip`: the peer address, or the client address of a trusted proxy (app `trust proxy`).
      const ip = normalizeIp(raw ?? req.ip ?? req.socket.remoteAddress ?? '');
      if (raw !== undefined && !ip) throw validationError({ ip: [`'${String(raw)}' is not an IPv4 or IPv6 address.`] });
      res.json({ ip: ip ?? '', countryCode: ip ? geoIpLookup.countryOf(ip) : null });
    },
  };
}
