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

/** One link of a service's home page (`GET /`). */
export interface HomeLink {
  /** What a person clicks. */
  title: string;
  /** Path on this service, e.g. `/docs`. */
  href: string;
}

/**
 * The favicon of both services (an orienteering control flag: white and orange halves), served as SVG at
 * `/favicon.svg` and `/favicon.ico`; browsers take an SVG icon by its content type.
 */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="2" y="2" width="28" height="28" fill="#fff" stroke="#333" stroke-width="2"/><path d="M30 2 L30 30 L2 30 Z" fill="#f47b20"/></svg>`;

/**
 * Router serving the spec (YAML as written, JSON as parsed), the reference page, the favicon and the service's
 * home page `/`: a small HTML page linking `links` (docs, live pages, health, version), or the same as JSON
 * (`{ service, title, version, links: [{ title, href }] }`) for a client that asks for `application/json`.
 * Mount before the validator.
 */
export function apiDocs(specFile: string, spec: OpenApiDocument, home: { service: string; links: HomeLink[] } = { service: 'api', links: [] }): Router {
  const yamlText = readFileSync(specFile, 'utf8');
  const jsonText = JSON.stringify(spec);
  const title = escapeHtml(String((spec.info as { title?: string } | undefined)?.title ?? 'API'));
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — reference</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
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
  // A parameter marked \`x-try-it-out: empty\` in the spec starts empty in "Try it out" instead of holding its
  // example, so that trying an operation with the examples as filled in succeeds (e.g. getPunches' \`user\`,
  // which an anonymous caller may not send).
  const init = `fetch('/openapi.json').then((r) => r.json()).then((spec) => {
  spec.servers = [{ url: window.location.origin, description: 'this server' }].concat(spec.servers || []);
  Object.values(spec.paths || {}).forEach((item) => Object.values(item).forEach((op) => (op && op.parameters || []).forEach((p) => {
    if (p['x-try-it-out'] !== 'empty') return;
    // The page would fill in the schema's example too: give the parameter a copy of its schema without one.
    var ref = p.schema && p.schema.$ref;
    p.schema = Object.assign({}, ref ? spec.components.schemas[ref.split('/').pop()] : p.schema);
    delete p.schema.example;
    delete p.example;
    delete p.examples;
  })));
  window.ui = SwaggerUIBundle({ spec: spec, dom_id: '#swagger-ui', deepLinking: true, displayOperationId: true, docExpansion: 'list', defaultModelsExpandDepth: 0, tryItOutEnabled: false });
});\n`;
  const version = String((spec.info as { version?: string } | undefined)?.version ?? '');
  const links = [{ title: 'API reference (try it out)', href: '/docs' }, ...home.links, { title: 'OpenAPI document (YAML)', href: '/openapi.yaml' }];
  const homePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2rem}</style>
</head>
<body>
<h1>${title}</h1>
<p>The <code>${escapeHtml(home.service)}</code> service, API version ${escapeHtml(version)}.</p>
<ul>
${links.map((l) => `<li><a href="${escapeHtml(l.href)}">${escapeHtml(l.title)}</a> <code>${escapeHtml(l.href)}</code></li>`).join('\n')}
</ul>
</body>
</html>
`;
  const router = express.Router();
  router.get('/', (req, res) => {
    res.vary('Accept');
    if (req.accepts(['text/html', 'application/json']) === 'application/json') {
      res.json({ service: home.service, title: String((spec.info as { title?: string } | undefined)?.title ?? ''), version, links });
      return;
    }
    res.type('text/html; charset=utf-8').send(homePage);
  });
  router.get(['/favicon.svg', '/favicon.ico'], (_req, res) => {
    res.type('image/svg+xml').set('Cache-Control', 'public, max-age=86400').send(FAVICON);
  });
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
    res.sendFile(req.params.file, { root: ASSETS_DIR, maxAge: '1d' });
  });
  return router;
}
