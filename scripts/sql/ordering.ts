/**
 * The calls that render every statement of the ordering service's repositories (`pnpm sql`, docs/database.md
 * "Checked-in SQL"). Arguments are placeholders: distinct values, so that each `$n` of a rendered statement
 * shows which argument it carries. A function whose text depends on its arguments has a call per variant.
 */
import * as battery from '../../services/ordering/src/battery/battery.repository';
import * as catalogImport from '../../services/ordering/src/catalog/catalog-import.repository';
import * as catalog from '../../services/ordering/src/catalog/catalog.repository';
import * as countries from '../../services/ordering/src/countries/countries.repository';
import * as discounts from '../../services/ordering/src/discounts/discounts.repository';
import * as erpOrders from '../../services/ordering/src/erp/erp-orders.repository';
import * as erpToken from '../../services/ordering/src/erp/erp-token.repository';
import * as erpWebhook from '../../services/ordering/src/erp/erp-webhook.repository';
import * as licensing from '../../services/ordering/src/identity/licensing.repository';
import * as refreshTokens from '../../services/ordering/src/identity/refresh-tokens.repository';
import * as serviceClients from '../../services/ordering/src/identity/service-clients.repository';
import * as users from '../../services/ordering/src/identity/users.repository';
import * as localization from '../../services/ordering/src/localization/localization.repository';
import * as maintenance from '../../services/ordering/src/maintenance/maintenance.repository';
import * as attention from '../../services/ordering/src/orders/admin/attention.repository';
import * as idempotency from '../../services/ordering/src/orders/placement/idempotency.repository';
import * as orderFlow from '../../services/ordering/src/orders/flow/order-flow.repository';
import * as orders from '../../services/ordering/src/orders/orders.repository';
import * as paymentBooks from '../../services/ordering/src/orders/flow/payment-books.repository';
import * as outbox from '../../services/ordering/src/outbox/outbox.repository';
import * as retailers from '../../services/ordering/src/retailers/retailers.repository';
import * as siid from '../../services/ordering/src/siid/siid.repository';
import { PLACEHOLDER_TIME as T, repository, type RepositoryStatements } from './define';
import { article, bomItem, claim, completion, erpQuery, mail, newItem, newOrder, pageFilter } from './ordering-placeholders';

const dir = 'services/ordering/src';

/** Every ordering repository, in file order. */
export const ORDERING_REPOSITORIES: RepositoryStatements[] = [
  repository(`${dir}/battery/battery.repository.ts`, battery, {
    findBatteryRecord: (r) => battery.findBatteryRecord(r.db, 8001234),
    upsertBatteryRecords: {
      some: (r) => battery.upsertBatteryRecords(r.db, [8001234], ['2026-01-01']),
      none: (r) => battery.upsertBatteryRecords(r.db, [], []),
    },
  }),
  repository(`${dir}/catalog/catalog-import.repository.ts`, catalogImport, {
    selectErpVersions: (r) => catalogImport.selectErpVersions(r.db),
    lockArticleImport: (r) => catalogImport.lockArticleImport(r.db, 'A-100'),
    upsertImportedArticle: {
      update: (r) => catalogImport.upsertImportedArticle(r.db, article, false),
      forced: (r) => catalogImport.upsertImportedArticle(r.db, article, true),
    },
    replaceArticleBom: {
      some: (r) => catalogImport.replaceArticleBom(r.db, 'A-100', [bomItem]),
      none: (r) => catalogImport.replaceArticleBom(r.db, 'A-100', []),
    },
    removeFromShop: (r) => catalogImport.removeFromShop(r.db, [{ articleNumber: 'A-100', erpVersion: 'v2' }]),
    selectErpShopArticleNumbers: (r) => catalogImport.selectErpShopArticleNumbers(r.db),
    articleNumberOfErpId: (r) => catalogImport.articleNumberOfErpId(r.db, 'erp-100'),
  }),
  repository(`${dir}/catalog/catalog.repository.ts`, catalog, {
    selectArticlesWithBom: {
      all: (r) => catalog.selectArticlesWithBom(r.db),
      selected: (r) => catalog.selectArticlesWithBom(r.db, { shopOnly: true, numbers: ['A-100'], cardsOnly: true }),
    },
    selectOptionLabelCultures: (r) => catalog.selectOptionLabelCultures(r.db),
    selectOptionLabels: (r) => catalog.selectOptionLabels(r.db, 'de'),
    upsertArticle: (r) => catalog.upsertArticle(r.db, article),
    replaceBomItems: {
      some: (r) => catalog.replaceBomItems(r.db, 'A-100', [bomItem]),
      none: (r) => catalog.replaceBomItems(r.db, 'A-100', []),
    },
    selectShopArticlesForExport: (r) => catalog.selectShopArticlesForExport(r.db),
    selectArticleCategory: (r) => catalog.selectArticleCategory(r.db, 'A-100'),
  }),
  repository(`${dir}/countries/countries.repository.ts`, countries, {
    selectCountryCultures: (r) => countries.selectCountryCultures(r.db),
    selectCountries: (r) => countries.selectCountries(r.db, 'de'),
  }),
  repository(`${dir}/discounts/discounts.repository.ts`, discounts, {
    insertCampaign: {
      run: (r) =>
        discounts.insertCampaign(r.db, {
          name: 'Spring',
          description: null,
          kind: 'percent',
          percent: '10',
          amount_cents: null,
          currency: 'EUR',
          valid_from: T,
          valid_to: null,
          max_redemptions_per_code: 1,
          created_by: 'admin',
        }),
      answers: [[{ id: 1 }]],
    },
    insertCodes: (r) => discounts.insertCodes(r.db, 1, ['SPRING'], 1),
    selectCodesWithCampaign: (r) => discounts.selectCodesWithCampaign(r.db, ['SPRING']),
    redeemOnce: (r) => discounts.redeemOnce(r.db, 5),
    insertRedemptions: (r) => discounts.insertRedemptions(r.db, 11, [{ codeId: 5, netAmountCents: 100 }]),
    releaseExpiredHolds: (r) => discounts.releaseExpiredHolds(r.db, T, 100),
    retakeReleasedUses: (r) => discounts.retakeReleasedUses(r.db, 11),
  }),
  repository(`${dir}/erp/erp-orders.repository.ts`, erpOrders, {
    selectErpOrders: {
      unfiltered: (r) => erpOrders.selectErpOrders(r.db, erpQuery),
      filtered: (r) => erpOrders.selectErpOrders(r.db, { ...erpQuery, customerEntityId: 'cust-1', countryCode: 'DE', searchText: 'Muster' }),
    },
  }),
  repository(`${dir}/erp/erp-token.repository.ts`, erpToken, {
    findStoredToken: (r) => erpToken.findStoredToken(r.db, 'weclapp'),
    upsertStoredToken: (r) => erpToken.upsertStoredToken(r.db, 'weclapp', 'ciphertext', 2, 'admin'),
  }),
  repository(`${dir}/erp/erp-webhook.repository.ts`, erpWebhook, {
    recordDelivery: (r) => erpWebhook.recordDelivery(r.db, { erpSystem: 'weclapp', entityName: 'salesOrder', entityId: 'so-1', type: 'update' }),
    claimDueJobs: (r) => erpWebhook.claimDueJobs(r.db, 10, 30),
    completeJob: (r) => erpWebhook.completeJob(r.db, 'job-1', 3),
    failJob: (r) => erpWebhook.failJob(r.db, 'job-1', 'timeout', T),
    renewJobLeases: (r) => erpWebhook.renewJobLeases(r.db, [{ id: 'job-1', attempts: 2 }], 30),
    selectErpWebhookBacklog: (r) => erpWebhook.selectErpWebhookBacklog(r.db),
  }),
  repository(`${dir}/identity/licensing.repository.ts`, licensing, {
    insertLicenses: (r) =>
      licensing.insertLicenses(r.db, [
        { id: 'lic-1', product: 'reader', secret_hash: 'hash', email: null, assigned_at: null, license_key: null, key_issued_at: null },
      ]),
    secretHashesOf: (r) => licensing.secretHashesOf(r.db, 'reader'),
    assignFreeLicense: (r) => licensing.assignFreeLicense(r.db, 'reader', 'a@example.org'),
    assignLicenseById: (r) => licensing.assignLicenseById(r.db, 'lic-1', 'reader', 'a@example.org'),
    findLicense: (r) => licensing.findLicense(r.db, 'lic-1'),
    lockAssignedLicense: {
      any: (r) => licensing.lockAssignedLicense(r.db, 'reader', 'a@example.org'),
      byId: (r) => licensing.lockAssignedLicense(r.db, 'reader', 'a@example.org', 'lic-1'),
    },
    storeLicenseKey: { run: (r) => licensing.storeLicenseKey(r.db, 'lic-1', 'KEY', T), answers: [[{ id: 'lic-1' }]] },
    licensesOf: {
      all: (r) => licensing.licensesOf(r.db, 'a@example.org'),
      product: (r) => licensing.licensesOf(r.db, 'a@example.org', 'reader'),
    },
  }),
  repository(`${dir}/identity/refresh-tokens.repository.ts`, refreshTokens, {
    insertRefreshToken: (r) => refreshTokens.insertRefreshToken(r.db, { tokenHash: 'hash', familyId: 'family-1', userId: 3, scope: null, expiresAt: T }),
    spendRefreshToken: (r) => refreshTokens.spendRefreshToken(r.db, 'hash'),
    findRefreshToken: (r) => refreshTokens.findRefreshToken(r.db, 'hash'),
    revokeFamily: (r) => refreshTokens.revokeFamily(r.db, 'family-1'),
    revokeUserRefreshTokens: (r) => refreshTokens.revokeUserRefreshTokens(r.db, 3),
  }),
  repository(`${dir}/identity/service-clients.repository.ts`, serviceClients, {
    insertServiceClient: {
      run: (r) => serviceClients.insertServiceClient(r.db, { name: 'Shop', client_id: 'shop', secret_hash: 'hash', identifier_hash: null }),
      answers: [[{ id: 1 }]],
    },
    listServiceClients: (r) => serviceClients.listServiceClients(r.db),
    findServiceClientByClientId: (r) => serviceClients.findServiceClientByClientId(r.db, 'shop'),
    findServiceClientById: (r) => serviceClients.findServiceClientById(r.db, 1),
    findActiveServiceClientByIdentifier: (r) => serviceClients.findActiveServiceClientByIdentifier(r.db, 'hash'),
  }),
  repository(`${dir}/identity/users.repository.ts`, users, {
    findUserById: (r) => users.findUserById(r.db, 3),
    findUserByName: (r) => users.findUserByName(r.db, 'anna'),
    findUserByLogin: (r) => users.findUserByLogin(r.db, 'anna@example.org'),
    listUsers: (r) => users.listUsers(r.db),
    anyUserExists: (r) => users.anyUserExists(r.db),
    insertUser: {
      run: (r) =>
        users.insertUser(r.db, {
          user_name: 'anna',
          email: 'anna@example.org',
          first_name: null,
          last_name: null,
          erp_retailer_entity_id: null,
          password_hash: 'hash',
        }),
      answers: [[{ id: 3 }]],
    },
    updateUser: {
      fields: (r) => users.updateUser(r.db, 3, { email: 'anna@example.org' }),
      bumpTokenVersion: (r) => users.updateUser(r.db, 3, { is_active: false }, { bumpTokenVersion: true }),
    },
    lockUser: (r) => users.lockUser(r.db, 3),
    lockActiveAdmins: (r) => users.lockActiveAdmins(r.db),
    touchLastLogin: (r) => users.touchLastLogin(r.db, 3),
    userTokenState: (r) => users.userTokenState(r.db, 3),
    emailTakenByOther: (r) => users.emailTakenByOther(r.db, 'anna@example.org', 3),
    replaceEmailVerification: (r) => users.replaceEmailVerification(r.db, { userId: 3, email: 'anna@example.org', tokenHash: 'hash', expiresAt: T }),
    spendEmailVerification: (r) => users.spendEmailVerification(r.db, 'hash'),
  }),
  repository(`${dir}/localization/localization.repository.ts`, localization, {
    replaceLocalizedCountries: (r) => localization.replaceLocalizedCountries(r.db, 'de', [{ culture: 'de', country_code: 'DE', name: 'Deutschland' }]),
    replaceLocalizedProductOptions: (r) =>
      localization.replaceLocalizedProductOptions(r.db, 'de', [{ culture: 'de', attribute_key: 'color', label: 'Farbe', options: '[]' }]),
  }),
  repository(`${dir}/maintenance/maintenance.repository.ts`, maintenance, {
    readMaintenanceState: (r) => maintenance.readMaintenanceState(r.db),
    setMaintenanceEnabled: (r) => maintenance.setMaintenanceEnabled(r.db, true, 'admin'),
    notifyClearCachesChannel: (r) => maintenance.notifyClearCachesChannel(r.db, 'instance-1'),
  }),
  repository(`${dir}/orders/admin/attention.repository.ts`, attention, {
    selectAttention: (r) => attention.selectAttention(r.db, 50),
    countAttention: (r) => attention.countAttention(r.db),
  }),
  repository(`${dir}/orders/flow/order-flow.repository.ts`, orderFlow, {
    storePaylink: {
      plain: (r) => orderFlow.storePaylink(r.db, 11, 900, 'https://pay.example.org/900', mail),
      completesJob: (r) => orderFlow.storePaylink(r.db, 11, 900, 'https://pay.example.org/900', mail, { kind: 'paylink', dedupeKey: 'order-11' }),
    },
    findOrderForPayment: (r) => orderFlow.findOrderForPayment(r.db, 900, 'SO-000011'),
    findOrderForSalesOrder: (r) => orderFlow.findOrderForSalesOrder(r.db, 'so-1', 'SO-000011'),
    lockExpiredUnpaidOrders: (r) => orderFlow.lockExpiredUnpaidOrders(r.db, T, 100),
    setCancellationReason: (r) => orderFlow.setCancellationReason(r.db, 11, 'expired'),
    flagLatePayment: (r) => orderFlow.flagLatePayment(r.db, 11, 4711),
    setPaymentTransaction: (r) => orderFlow.setPaymentTransaction(r.db, 11, 4711),
    erpHandOffFacts: (r) => orderFlow.erpHandOffFacts(r.db, 11, ['A-100']),
    setErpSalesOrder: (r) => orderFlow.setErpSalesOrder(r.db, 11, 'so-1'),
    releaseRedemptions: (r) => orderFlow.releaseRedemptions(r.db, 11),
    insertDelivery: {
      run: (r) => orderFlow.insertDelivery(r.db, { contentType: 'application/json', transactionId: 4711, claimedStatus: 'confirmed' }, 10_000),
      answers: [[{ id: 1 }]],
    },
    markDeliveryFetching: (r) => orderFlow.markDeliveryFetching(r.db, 1),
    isKnownTransaction: (r) => orderFlow.isKnownTransaction(r.db, 4711),
    purgeDeliveries: (r) => orderFlow.purgeDeliveries(r.db, T, 1000),
    setDeliveryOutcome: (r) => orderFlow.setDeliveryOutcome(r.db, 1, { providerStatus: 'confirmed', orderId: 11, outcome: 'paid' }),
    claimErpCreate: (r) => orderFlow.claimErpCreate(r.db, 11, 60_000),
    releaseErpCreate: (r) => orderFlow.releaseErpCreate(r.db, 11),
    holdForPayment: (r) => orderFlow.holdForPayment(r.db, 11),
  }),
  repository(`${dir}/orders/flow/payment-books.repository.ts`, paymentBooks, {
    lockOrderForPayment: (r) => paymentBooks.lockOrderForPayment(r.db, 11),
    recordReceipt: (r) => paymentBooks.recordReceipt(r.db, { orderId: 11, transactionId: 4711, amountCents: 1785, currency: 'EUR', mode: 'test' }),
    isReceiptOf: (r) => paymentBooks.isReceiptOf(r.db, 11, 4711),
    recordRefund: (r) =>
      paymentBooks.recordRefund(r.db, {
        orderId: 11,
        transactionId: 4712,
        originalTransactionId: 4711,
        amountCents: 1785,
        currency: 'EUR',
        status: 'confirmed',
        reportedRefundedCents: null,
      }),
  }),
  repository(
    `${dir}/outbox/outbox.repository.ts`,
    outbox,
    {
      insertMessage: (r) => outbox.insertMessage(r.db, mail),
      insertMessages: (r) => outbox.insertMessages(r.db, [mail, { ...mail, dedupeKey: 'order-2', notBefore: T }]),
      claimDue: (r) => outbox.claimDue(r.db, 'mail', 10, 30),
      markSentMany: (r) => outbox.markSentMany(r.db, [claim]),
      markFailed: (r) => outbox.markFailed(r.db, claim, 'smtp timeout', T),
      markDead: (r) => outbox.markDead(r.db, claim, 'smtp rejected'),
      renewLeases: (r) => outbox.renewLeases(r.db, [claim], 30),
      selectDeadMessages: {
        first: (r) => outbox.selectDeadMessages(r.db, { limit: 50 }),
        kindBefore: (r) => outbox.selectDeadMessages(r.db, { kind: 'mail', limit: 50, beforeId: 100 }),
      },
      reviveDeadMessage: (r) => outbox.reviveDeadMessage(r.db, 7),
      countPending: {
        all: (r) => outbox.countPending(r.db),
        kind: (r) => outbox.countPending(r.db, 'mail'),
      },
      releaseReservedJob: (r) => outbox.releaseReservedJob(r.db, 'paylink', 'order-11', 'provider down', T),
      selectOutboxBacklog: (r) => outbox.selectOutboxBacklog(r.db),
    },
    {
      messagesInsert: 'builds the insert that insertMessages and the order statements embed (rendered there)',
      completeJobSql: 'builds the job completion fragment storePaylink embeds (rendered there)',
      notifyInserted: 'builds the notify fragment for inserted jobs that insertMessages and the order statements embed (rendered there)',
    },
  ),
  repository(`${dir}/orders/orders.repository.ts`, orders, {
    insertNewOrder: {
      run: (r) => orders.insertNewOrder(r.db, newOrder, 'SO-', { actor: 'user:3', reason: null }, [newItem]),
      answers: [[{ id: 11, items: [] }]],
    },
    setDrawnCardNumbers: (r) => orders.setDrawnCardNumbers(r.db, 11, [{ position: 1, cardNumber: 8001234 }], 'cardNumber'),
    insertStateChange: (r) => orders.insertStateChange(r.db, { orderId: 11, from: 'created', to: 'paid', actor: 'system', reason: null }),
    updateOrderStateIf: (r) => orders.updateOrderStateIf(r.db, 11, 'paid', ['created', 'awaitingPayment']),
    selectOrderState: { run: (r) => orders.selectOrderState(r.db, 11), answers: [[{ state: 'paid' }]] },
    selectPaylinkOf: (r) => orders.selectPaylinkOf(r.db, 11),
    setOrderPaylink: (r) => orders.setOrderPaylink(r.db, 11, 900, 'https://pay.example.org/900'),
    clearOrderPaylink: (r) => orders.clearOrderPaylink(r.db, 11, 900),
    lockCardItems: (r) => orders.lockCardItems(r.db, [21, 22]),
    setItemCardNumber: (r) => orders.setItemCardNumber(r.db, 21, 8001234, 'cardNumber'),
    selectOrderPage: {
      states: (r) => orders.selectOrderPage(r.db, pageFilter),
      filtered: (r) => orders.selectOrderPage(r.db, { ...pageFilter, erpRetailerEntityId: 'cust-1', shippingCountryId: 276, searchText: 'Muster' }),
    },
    selectOrder: (r) => orders.selectOrder(r.db, 11),
    selectItems: (r) => orders.selectItems(r.db, 11),
    insertOrderNote: (r) => orders.insertOrderNote(r.db, 11, 'admin', 'called the customer'),
  }),
  repository(`${dir}/orders/placement/idempotency.repository.ts`, idempotency, {
    takeIdempotencyKey: (r) =>
      idempotency.takeIdempotencyKey(r.db, { scope: 'orders', key: 'key-1', requestHash: 'hash', expiresAt: T, waitMs: 5000, purgeLimit: 100 }),
    renewIdempotentResponse: (r) => idempotency.renewIdempotentResponse(r.db, { scope: 'orders', key: 'key-1' }, 11, { id: 11 }),
    insertOutboxAndCompleteKey: {
      messages: (r) => idempotency.insertOutboxAndCompleteKey(r.db, [mail], null),
      completion: (r) => idempotency.insertOutboxAndCompleteKey(r.db, [mail], completion),
    },
  }),
  repository(`${dir}/retailers/retailers.repository.ts`, retailers, {
    lockRetailerImport: (r) => retailers.lockRetailerImport(r.db, 'weclapp'),
    replaceRetailerRows: (r) =>
      retailers.replaceRetailerRows(r.db, 'weclapp', [
        {
          erp_system: 'weclapp',
          erp_id: 'cust-1',
          erp_version: 'v1',
          customer_number: 'C-1',
          company: 'Timing GmbH',
          email: null,
          phone: null,
          website: null,
          street: null,
          street2: null,
          zip_code: null,
          city: null,
          state: null,
          country_code: 'DE',
        },
      ]),
    selectRetailers: {
      all: (r) => retailers.selectRetailers(r.db, 'weclapp', false),
      publicOnly: (r) => retailers.selectRetailers(r.db, 'weclapp', true),
    },
  }),
  repository(`${dir}/siid/siid.repository.ts`, siid, {
    takenAmong: (r) => siid.takenAmong(r.db, [8001234, 8001235]),
    isTaken: (r) => siid.isTaken(r.db, 8001234),
    freeInRange: (r) => siid.freeInRange(r.db, 8000000, 8999999, 10, [8001234]),
    insertClaims: (r) => siid.insertClaims(r.db, 'siac', [8001234], 'SO-000011', 'reserved'),
    deleteClaimsOfOrder: (r) => siid.deleteClaimsOfOrder(r.db, 'SO-000011'),
    updateStateOfOrder: (r) => siid.updateStateOfOrder(r.db, 'SO-000011', 'assigned'),
    deleteClaimPairs: (r) => siid.deleteClaimPairs(r.db, [8001234], ['SO-000011']),
  }),
];
