/**
 * Handlers of the ERP operations: imports (`importArticles`, `importRetailers`, `importLocalizedCountries`,
 * `importLocalizedProductOptions`), the shop-article CSV (`getShopArticlesAsCsv`), retailer lists
 * (`listPublicRetailers`, `listInternalRetailers`), the ERP webhook (`receiveErpWebhook`) and the ERP token
 * utilities (`devGetErpApiToken`, `devSetErpApiToken`, `devTestErpApi`). Thin: the work is in `src/erp/**`,
 * `src/catalog/catalog.import.ts`, `src/retailers/**`, `src/localization/**`.
 */
import { ApiError, principalOf, specFilled, validationError, type Handlers } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import type { OrderingContext } from '../composition';
import { shopArticlesCsv } from '../catalog/catalog.export';
import { importArticles } from '../catalog/catalog.import';
import { importLocalizedCountries, importLocalizedProductOptions } from '../localization/localization.import';
import { importRetailers, importSummary, listRetailers } from '../retailers/retailers.service';
import { requestCenterQuotation } from '../quotations/center-quotation.service';
import { effectiveUserGroup } from '../catalog/user-groups';
import { requestCaller } from './caller';
import { ErpError } from '../erp/erp.client';
import { acceptWebhook, verifyWebhookSecret } from '../erp/erp-webhook.service';
import { salesInvoicesCsv } from '../erp/sales-invoices.export';
import { selectErpOrders } from '../erp/erp-orders.repository';
import type { operations } from '../generated/openapi';

/** `user:<id>:<name>` / `client:<id>:<name>` of the caller (audit columns). */
function actor(p: Principal | null): string {
  return p ? `${p.kind}:${p.id}:${p.name}` : 'anonymous';
}

/** Seconds a client should wait before retrying an operation that failed on the ERP system. */
const ERP_RETRY_AFTER_SECONDS = 30;

/** Runs `work`; an `ErpError` becomes the documented 503 (message names system and operation, never a token). */
async function withErp<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ErpError)
      throw new ApiError(503, `The ERP system is not available: ${err.message}`, { headers: { 'Retry-After': String(ERP_RETRY_AFTER_SECONDS) } });
    throw err;
  }
}

/** ERP handlers. */
export function erpHandlers(ctx: OrderingContext): Handlers<operations> {
  const clients = ctx.services.erpClients;
  const limits = ctx.services.orderLimits;
  return {
    async createQuotationForSubscription(req, res) {
      // The ERP mails the quotation to an address the caller picks: the order pipeline's mail limits apply.
      const principal = principalOf<Principal>(res);
      if (effectiveUserGroup(principal) === 'public') await limits.chargePublicOrder(requestCaller(req, res), 0, req.body.email);
      else await limits.chargeRecipient(req.body.email);
      await requestCenterQuotation(ctx.database.db, req.body, actor(principalOf<Principal>(res)));
      res.status(200).end();
    },
    async importRetailers(_req, res) {
      res.json(importSummary(await withErp(() => importRetailers({ db: ctx.database.db, erp: clients.client, logger: ctx.logger }))));
    },
    async listPublicRetailers(_req, res) {
      res.json(await listRetailers(ctx.database.db, false));
    },
    async listInternalRetailers(_req, res) {
      res.json(await listRetailers(ctx.database.db, true));
    },
    async importLocalizedCountries(req, res) {
      res.json(await importLocalizedCountries(ctx.database.db, ctx.services.caches, ctx.logger, req.body));
    },
    async importLocalizedProductOptions(req, res) {
      res.json(await importLocalizedProductOptions(ctx.database.db, ctx.services.caches, ctx.logger, req.body));
    },
    async getShopArticlesAsCsv(_req, res) {
      const csv = await shopArticlesCsv(ctx.database.db);
      res.set('Content-Disposition', 'attachment; filename="shop-articles.csv"').type('text/csv; charset=utf-8').send(csv);
    },
    async importArticles(req, res) {
      const system = req.query.erpSystem;
      res.json(
        await withErp(() =>
          importArticles({ db: ctx.database.db, erp: clients.client, logger: ctx.logger, caches: ctx.services.caches }, system, {
            force: specFilled(req.query.updateEvenIfErpVersionMatches, 'importArticles updateEvenIfErpVersionMatches'),
          }),
        ),
      );
    },
    async receiveErpWebhookByGet(req, res) {
      if (!verifyWebhookSecret(ctx.config.erpWebhookSecret, req.query.secret)) throw new ApiError(401, 'Missing or wrong webhook secret.');
      const q = req.query;
      const accepted = await acceptWebhook(ctx.database.db, ctx.services.erpEntityHandlers, {
        erpSystem: q.erpSystem,
        entityName: q.entityName,
        entityId: q.entityId,
        type: q.type,
      });
      if (!accepted) ctx.logger.debug({ entityName: q.entityName }, 'ERP webhook for an entity without handler acknowledged and ignored');
      res.status(200).end();
    },
    async receiveErpWebhook(req, res) {
      if (!verifyWebhookSecret(ctx.config.erpWebhookSecret, req.query.secret)) throw new ApiError(401, 'Missing or wrong webhook secret.');
      const body = req.body;
      const accepted = await acceptWebhook(ctx.database.db, ctx.services.erpEntityHandlers, {
        erpSystem: req.query.erpSystem,
        entityName: body.entityName,
        entityId: body.entityId,
        type: body.type,
      });
      if (!accepted) ctx.logger.debug({ entityName: body.entityName }, 'ERP webhook for an entity without handler acknowledged and ignored');
      res.status(200).end();
    },
    async devGetErpOrders(req, res) {
      const q = req.query;
      const page = specFilled(q.page, 'devGetErpOrders page');
      const size = specFilled(q.size, 'devGetErpOrders size');
      const result = await selectErpOrders(ctx.database.db, {
        states: q.states ?? [],
        customerEntityId: q.customerEntityId || null,
        countryCode: q.countryCode || null,
        searchText: q.searchText || null,
        page,
        size,
        sort: specFilled(q.sort, 'devGetErpOrders sort'),
      });
      res.json({ items: result.items, page, size, totalCount: result.totalCount });
    },
    async devGetSalesInvoicesCsvExport(req, res) {
      const { year, month } = req.query;
      const csv = await withErp(() => salesInvoicesCsv(clients.client, 'weclapp', year, month));
      const name = `sales-invoices-${year}-${String(month).padStart(2, '0')}.csv`;
      res.set('Content-Disposition', `attachment; filename="${name}"`).type('text/csv; charset=utf-8').send(csv);
    },
    async devGetErpApiToken(req, res) {
      res.set('Cache-Control', 'no-store').json(await clients.info(req.query.erpSystem));
    },
    async devSetErpApiToken(req, res) {
      // A token the ERP refuses is never stored (it would break every ERP call until replaced).
      if ((await clients.checkToken(req.query.erpSystem, req.query.token)) === 'rejected')
        throw validationError({ token: ['The ERP system rejected this token (401/403); nothing was stored.'] });
      await clients.setToken(req.query.erpSystem, req.query.token, actor(principalOf<Principal>(res)));
      res.status(200).end();
    },
    async devTestErpApi(req, res) {
      const system = req.query.erpSystem;
      const erp = clients.client;
      const id = req.query.quotationEntityId;
      if (!id) {
        const ping = await erp.ping(system);
        res.json({
          erpSystem: system,
          baseUrl: ping.baseUrl,
          isReachable: ping.isReachable,
          httpStatus: ping.httpStatus,
          latencyMs: ping.latencyMs,
          message: ping.message,
          quotation: null,
        });
        return;
      }
      const started = performance.now();
      const base = { erpSystem: system, baseUrl: erp.baseUrl(system) };
      const latencyMs = () => Math.round(performance.now() - started);
      try {
        const quotation = await erp.getQuotation(system, id);
        res.json({
          ...base,
          isReachable: true,
          httpStatus: quotation ? 200 : 404,
          latencyMs: latencyMs(),
          message: quotation ? `OK: quotation ${quotation.quotationNumber}` : `OK: no quotation with id ${id}`,
          quotation: (quotation as unknown as Record<string, unknown>) ?? null,
        });
      } catch (err) {
        if (!(err instanceof ErpError)) throw err;
        res.json({ ...base, isReachable: false, httpStatus: err.status, latencyMs: latencyMs(), message: err.message, quotation: null });
      }
    },
  };
}
