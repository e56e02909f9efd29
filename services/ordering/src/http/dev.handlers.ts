/**
 * Handlers of the development utilities (tag `dev`) owned here: environment, request headers,
 * remote IP, geo-IP, encryption, transliteration, passwords, QR codes and the uptime-monitor status.
 * `devGetUserName`/`devGetUserClaims` live in `dev-identity.handlers.ts`; the ERP and payment utilities come
 * with their clients.
 */
import type { Response } from 'express';
import { specFilled, validationError, type Handlers } from '@sports-timing/shared';
import type { OrderingContext } from '../composition';
import { geoIpLookup, normalizeIp } from '../countries/geoip';
import { DecryptionError } from '../crypto/aead';
import { describeEnvironment } from '../devtools/environment';
import { randomPassword } from '../devtools/passwords';
import { remoteIpOf, requestHeaders } from '../devtools/request-info';
import { DependencyMonitor, overallStatus } from '../devtools/status';
import { toAscii } from '../devtools/transliterate';
import type { operations } from '../generated/openapi';

/** Authenticated data of the encrypt/decrypt utilities: their ciphertexts never decrypt as stored secrets. */
const DEV_UTILITY_AAD = 'dev-utility';

/** Development-utility handlers; one dependency monitor (30-second cache) per app. */
export function devHandlers(ctx: OrderingContext): Handlers<operations> {
  const monitor = new DependencyMonitor({
    pool: ctx.database.pool,
    mailer: ctx.mailer,
    smtpConfigured: !!ctx.config.smtpUrl,
    probes: ctx.statusProbes,
  });
  const maintenance = ctx.services.maintenance;
  return {
    async devGetEnvironment(_req, res) {
      const [report, maintenanceMode] = await Promise.all([monitor.report(true), maintenance.isOn()]);
      res.json(await describeEnvironment({ environment: ctx.config.environment, db: ctx.database.db, report, maintenanceMode }));
    },
    devGetRequestHeaders(req, res) {
      res.json(requestHeaders(req));
    },
    devGetRemoteIp(req, res) {
      res.json(remoteIpOf(req));
    },
    devGetCountryByIp(req, res) {
      const raw = req.query.ip;
      const ip = normalizeIp(raw ?? remoteIpOf(req).remoteIp);
      if (raw !== undefined && !ip) throw validationError({ ip: [`'${String(raw)}' is not an IPv4 or IPv6 address.`] });
      res.json({ ip: ip ?? '', countryCode: ip ? geoIpLookup.countryOf(ip) : null });
    },
    devEncrypt(req, res) {
      const enc = ctx.services.encryption;
      res.json({ ciphertext: enc.encrypt(req.query.text, DEV_UTILITY_AAD), keyVersion: enc.currentVersion });
    },
    devDecrypt(req, res) {
      try {
        res.json({ text: ctx.services.encryption.decrypt(req.query.text, DEV_UTILITY_AAD) });
      } catch (err) {
        if (err instanceof DecryptionError) throw validationError({ text: ['is not a valid ciphertext of this service.'] });
        throw err;
      }
    },
    devTransliterate(req, res) {
      const body: unknown = req.body;
      const text = typeof body === 'string' ? body : (body as { text: string }).text;
      res.type('text/plain; charset=utf-8').send(toAscii(text));
    },
    devGetRandomPassword(req, res) {
      res.set('Cache-Control', 'no-store').json({ password: randomPassword(specFilled(req.query.length, 'devGetRandomPassword length')) });
    },
    async devGetQrcode(req, res) {
      const q = req.query;
      const filled = <T>(v: T | undefined, name: string) => specFilled(v, `devGetQrcode ${name}`);
      const qr = await ctx.services.qrCodes.render(filled(q.content, 'content'), {
        format: q.format ?? 'png',
        ecc: q.ecc ?? 'M',
        pixels: filled(q.pixels, 'pixels'),
      });
      (res as Response).type(qr.contentType).send(qr.body);
    },
    async devGetUptimeMonitorStatus(_req, res) {
      const r = await monitor.report();
      res.json({
        status: overallStatus(r),
        checkedAt: r.checkedAt.toISOString(),
        checks: { database: r.database.status, smtp: r.smtp, erp: r.erp, paymentProvider: r.paymentProvider },
      });
    },
  };
}
