/**
 * Handlers of the shop catalogue and lookup operations under `/api/grpc-json/v1/shop` (tag `shop`; errors as
 * google.rpc.Status): articles, countries, SIIDs. Discount codes and orders live in `orders.handlers.ts`.
 */
import { principalOf, sendJsonBody, specFilled, type Handlers } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import { getShopArticle, shopArticleListBody } from '../catalog/catalog.service';
import { parseAcceptLanguage } from '../culture/culture';
import { effectiveUserGroup } from '../catalog/user-groups';
import type { OrderingContext } from '../composition';
import { listCountries } from '../countries/countries.service';
import type { operations } from '../generated/openapi';
import { checkServiceId, drawFreeServiceIds } from '../siid/siid.service';

/** Shop catalogue and lookup handlers. */
export function shopHandlers(ctx: OrderingContext): Handlers<operations> {
  const db = ctx.database.db;
  return {
    async listShopArticles(req, res) {
      const list = await shopArticleListBody(db, ctx.services.articleLists, {
        callerGroup: effectiveUserGroup(principalOf<Principal>(res)),
        includeUnavailableArticles: specFilled(req.query.includeUnavailableArticles, 'listShopArticles includeUnavailableArticles'),
        includeSubitemArticles: specFilled(req.query.includeSubitemArticles, 'listShopArticles includeSubitemArticles'),
        filterByArticleNumbers: req.query.filterByArticleNumbers,
        preferences: parseAcceptLanguage(req.headers['accept-language']),
      });
      // The cached body as is (no per-request serialization); with response validation on, through res.json.
      if (ctx.validateResponses) res.json(list.value);
      else sendJsonBody(req, res, list);
    },
    async getShopArticle(req, res) {
      const group = effectiveUserGroup(principalOf<Principal>(res));
      res.json(await getShopArticle(db, req.params.articleNumber, group, parseAcceptLanguage(req.headers['accept-language'])));
    },
    async getShopCountries(req, res) {
      const list = await listCountries(db, parseAcceptLanguage(req.headers['accept-language']));
      res.json({ countries: list.countries });
    },
    async getRandomFreeSiids(req, res) {
      const { cardType } = req.params;
      const serviceIds = await drawFreeServiceIds(db, cardType, specFilled(req.query.numberOfServiceIds, 'getRandomFreeSiids numberOfServiceIds'));
      res.json({ cardType, serviceIds });
    },
    async checkSiid(req, res) {
      res.json(await checkServiceId(db, req.params.cardType, req.params.serviceId));
    },
  };
}
