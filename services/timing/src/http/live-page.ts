/**
 * The organiser's live page of an event, `/events/{id}/live` (services/timing/README.md, "Live page"): static
 * HTML, CSS and script from `live-page/`, and the uPlot chart library from its npm package, all served by
 * the service itself (no CDN). The page reads `getEventStatus` and follows `getPunchStream` with the caller's
 * key, so it shows exactly what the API lets that caller read. Mount before the validator: these paths are
 * pages, not API operations.
 */
import path from 'node:path';
import express, { type Router } from 'express';
import { pageSecurityHeaders } from '@sports-timing/shared';

/** Folder of the page's own files (beside src/ and dist/, so the same relative path works compiled). */
const PAGE_DIR = path.join(__dirname, '../../live-page');
/** uPlot's built files (the IIFE bundle and its stylesheet). */
const UPLOT_DIR = path.join(path.dirname(require.resolve('uplot/package.json')), 'dist');

/** Router of the live page and its assets. */
export function livePage(): Router {
  const router = express.Router();
  const headers = pageSecurityHeaders();
  router.use('/live', headers);
  router.get(/^\/events\/\d{1,10}\/live\/?$/, headers, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(path.join(PAGE_DIR, 'index.html'));
  });
  router.get('/live/app.js', (_req, res) => res.sendFile(path.join(PAGE_DIR, 'app.js')));
  router.get('/live/app.css', (_req, res) => res.sendFile(path.join(PAGE_DIR, 'app.css')));
  router.use('/live/assets', express.static(UPLOT_DIR, { index: false, maxAge: '1d', fallthrough: false }));
  return router;
}
