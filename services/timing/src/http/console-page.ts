/**
 * The organiser's console, `/console` (README "Your own event"): static HTML and CSS from `web/`, its script
 * bundled from `web/console.ts` (web-assets.ts), under the pages' strict Content-Security-Policy. It works on
 * the timing API alone with the key the organiser signs in with; its one route of its own is
 * `/console/server.json`, the addresses of this server as the browser reached it, for the result clients'
 * settings. Mount before the validator: these paths are pages, not API operations.
 */
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import express, { type Request, type Router } from 'express';
import { pageSecurityHeaders } from '@sports-timing/shared';
import { sendBundle } from './live-page';
import { WEB_DIR, type WebBundles } from './web-assets';

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/i;

/**
 * The server's addresses for the clients' settings: first the origin of this request (its Host, or
 * `X-Forwarded-Proto`/`X-Forwarded-Host` when they come from a trusted proxy, express `trust proxy`); when
 * that is a loopback address and the request does come from this machine (the organiser on the server
 * itself), the machine's other IPv4 addresses with the same port come first, since no modem or MeOS computer
 * can reach 127.0.0.1 of this machine. A remote caller naming a loopback Host learns no interface address.
 */
function serverOrigins(req: Request): string[] {
  const host = req.host;
  const own = `${req.protocol}://${host}`;
  const name = host.replace(/:\d+$/, '');
  const fromHere = /^(127\.|::1$|::ffff:127\.)/.test(req.socket.remoteAddress ?? '');
  if (!LOOPBACK.test(name) || !fromHere) return [own];
  const port = /:(\d+)$/.exec(host)?.[1];
  const lan = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && a.family === 'IPv4' && !a.internal)
    .map((a) => `${req.protocol}://${a!.address}${port ? `:${port}` : ''}`);
  return [...lan, own];
}

/** Router of the console and its assets. */
export function consolePage(bundles: WebBundles): Router {
  const router = express.Router();
  const headers = pageSecurityHeaders();
  router.use('/console', headers);
  router.get(/^\/console\/?$/, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(path.join(WEB_DIR, 'console.html'));
  });
  router.get('/console/app.js', (_req, res) => sendBundle(res, bundles, 'console.js'));
  router.get('/console/console.js.map', (_req, res) => sendBundle(res, bundles, 'console.js.map'));
  router.get('/console/console.css', (_req, res) => res.sendFile(path.join(WEB_DIR, 'console.css')));
  router.get('/console/server.json', (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ origins: serverOrigins(req) });
  });
  return router;
}
