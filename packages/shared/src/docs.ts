/**
 * API documentation served by each service from its own spec: `/openapi.yaml`, `/openapi.json` and a
 * reference page at `/docs` rendered by Swagger UI, whose assets ship in the `swagger-ui-dist` package
 * and are served locally (no CDN, works offline and under a strict CSP).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler, type Router } from 'express';
import helmet from 'helmet';
import type { OpenApiDocument } from './openapi';

/**
 * Security headers of every HTML page the services serve (the reference page, timing's live page) and their
 * scripts, by helmet: a Content-Security-Policy that admits only the service's own scripts, styles, images
 * and connections (Swagger UI and uPlot set inline styles, hence `style-src 'unsafe-inline'`; no inline
 * script, no `eval`), `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY` with `frame-ancestors
 * 'none'` (no framing, so no click-jacking), `Referrer-Policy: no-referrer`, and helmet's other defaults.
 * HSTS is left to the TLS-terminating proxy (infra/README.md).
 */
export function pageSecurityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    strictTransportSecurity: false,
  });
}

/** The Swagger UI files the reference page loads: nothing else of the package is served (no stock index.html). */
const DOCS_ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js']);

const ASSETS_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Router serving the spec (YAML as written, JSON as parsed) and the reference page. Mount before the validator. */
export function apiDocs(specFile: string, spec: OpenApiDocument): Router {
  const yamlText = readFileSync(specFile, 'utf8');
  const jsonText = JSON.stringify(spec);
  const title = escapeHtml(String((spec.info as { title?: string } | undefined)?.title ?? 'API'));
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;
  // "Try it out" targets the address the page was loaded from (whatever host and port the service runs on),
  // listed first; the spec's own servers stay selectable after it.
  const init = `fetch('/openapi.json').then((r) => r.json()).then((spec) => {
  spec.servers = [{ url: window.location.origin, description: 'this server' }].concat(spec.servers || []);
  window.ui = SwaggerUIBundle({ spec: spec, dom_id: '#swagger-ui', deepLinking: true, displayOperationId: true, docExpansion: 'list', defaultModelsExpandDepth: 0, tryItOutEnabled: false });
});\n`;
  const router = express.Router();
  router.use('/docs', pageSecurityHeaders());
  router.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml; charset=utf-8').send(yamlText);
  });
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json; charset=utf-8').send(jsonText);
  });
  router.get('/docs', (_req, res) => {
    res.type('text/html; charset=utf-8').send(page);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('text/javascript; charset=utf-8').send(init);
  });
  router.get('/docs/assets/:file', (req, res, next) => {
    if (!DOCS_ASSETS.has(req.params.file)) return next();
    res.sendFile(path.join(ASSETS_DIR, req.params.file), { maxAge: '1d' });
  });
  return router;
}
