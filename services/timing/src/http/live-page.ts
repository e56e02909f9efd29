/**
 * The organiser's live page of an event, `/events/{id}/live` (services/timing/README.md, "Live page"): static
 * HTML and CSS from `web/`, its script bundled from `web/live-page.ts` (web-assets.ts), and the uPlot
 * stylesheet from its npm package, all served by the service itself (no CDN). The page reads
 * `getEventStatus` and follows `getPunchStream` with the caller's key, so it shows exactly what the API lets
 * that caller read. Mount before the validator: these paths are pages, not API operations.
 */
import path from 'node:path';
import express, { type Response, type Router } from 'express';
import { pageSecurityHeaders } from '@sports-timing/shared';
import { WEB_DIR, type WebBundles } from './web-assets';

/** uPlot's built files (its stylesheet; the script is in the bundle). */
const UPLOT_DIR = path.join(path.dirname(require.resolve('uplot/package.json')), 'dist');

/** Sends bundle `name` of `bundles` as JavaScript (or its source map), 404 when there is none. */
export async function sendBundle(res: Response, bundles: WebBundles, name: string): Promise<void> {
  const text = await bundles.get(name);
  if (text === undefined) {
    res.sendStatus(404);
    return;
  }
  res.type(name.endsWith('.map') ? 'application/json' : 'text/javascript');
  res.setHeader('Cache-Control', 'no-cache');
  res.send(text);
}

/** Router of the live page and its assets. */
export function livePage(bundles: WebBundles): Router {
  const router = express.Router();
  const headers = pageSecurityHeaders();
  router.use('/live', headers);
  router.get(/^\/events\/\d{1,10}\/live\/?$/, headers, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(path.join(WEB_DIR, 'live.html'));
  });
  router.get(['/live/app.js', '/live/live.js.map'], (req, res) => sendBundle(res, bundles, req.path === '/live/app.js' ? 'live.js' : 'live.js.map'));
  router.get('/live/app.css', (_req, res) => res.sendFile(path.join(WEB_DIR, 'app.css')));
  router.use('/live/assets', express.static(UPLOT_DIR, { index: false, maxAge: '1d', fallthrough: false }));
  return router;
}
