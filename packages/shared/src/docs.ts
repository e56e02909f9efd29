/**
 * API documentation served by each service from its own spec: `/openapi.yaml`, `/openapi.json` and a
 * reference page at `/docs` rendered by Swagger UI, whose assets ship in the `swagger-ui-dist` package
 * and are served locally (no CDN, works offline and under a strict CSP).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';
import type { OpenApiDocument } from './openapi';

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
  router.use('/docs/assets', express.static(ASSETS_DIR, { index: false, maxAge: '1d', fallthrough: false }));
  return router;
}
