import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { openapiDocument } from '../../generated/openapi/document.js';
import { GatewayError } from '../core/errors.js';

/** Swagger UI's files, served from its npm package (read once at start, so the page works offline). */
const swaggerAssets = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;

type Obj = Record<string, unknown>;

/** `#getRequests` (the anchors the deprecation notices link to) → Swagger UI's deep link `#/requests/getRequests`. */
function operationTags(): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const item of Object.values((openapiDocument.paths ?? {}) as Record<string, Obj>)) {
    for (const op of Object.values(item) as Obj[]) {
      if (typeof op?.operationId === 'string')
        tags[op.operationId] = ((op.tags as string[] | undefined) ?? ['default'])[0]!;
    }
  }
  return tags;
}

/** The page's own script: Swagger UI on `/documentation/json`, try-it-out on, no calls to the public validator. */
function initScript(): string {
  return `(() => {
  const tags = ${JSON.stringify(operationTags())};
  const anchor = location.hash.slice(1);
  if (tags[anchor] !== undefined) history.replaceState(null, '', '#/' + tags[anchor] + '/' + anchor);
  // Try-it-out calls the gateway that serves this page, whatever the contract's example servers say.
  fetch('/documentation/json').then((response) => response.json()).then((contract) => {
    contract.servers = [{ url: location.origin, description: 'This gateway' }];
    window.ui = SwaggerUIBundle({
      spec: contract,
      dom_id: '#swagger-ui',
      deepLinking: true,
      tryItOutEnabled: true,
      displayOperationId: true,
      validatorUrl: null,
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      layout: 'BaseLayout',
    });
  });
})();
`;
}

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Intent Gateway API reference</title>
<link rel="icon" type="image/png" href="/documentation/static/favicon-32x32.png">
<link rel="stylesheet" href="/documentation/static/swagger-ui.css">
<style>body{margin:0}.topnote{font:14px/1.5 system-ui,sans-serif;padding:.5rem 1rem;background:#1b1b1b;color:#eee}.topnote a{color:#8cf}</style>
</head>
<body>
<div class="topnote">OpenAPI document: <a href="/documentation/json">/documentation/json</a> · GraphQL: <a href="/graphql">/graphql</a> · Status stream: <a href="/documentation/asyncapi.yaml">AsyncAPI</a> · <a href="/explorer">Explorer</a></div>
<div id="swagger-ui"></div>
<script src="/documentation/static/swagger-ui-bundle.js"></script>
<script src="/documentation/static/swagger-ui-standalone-preset.js"></script>
<script src="/documentation/init.js"></script>
</body>
</html>
`;

/**
 * `/documentation/json` serves the OpenAPI document; `/documentation` the API reference rendered from it by
 * Swagger UI (Markdown descriptions, schemas, try-it-out against this gateway), with every asset served from the
 * `swagger-ui-dist` package, so it works without internet.
 */
export function registerDocumentation(app: FastifyInstance): void {
  const distDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assets = new Map(
    Object.entries(swaggerAssets).map(([file, type]) => [file, { type, body: readFileSync(path.join(distDir, file)) }]),
  );
  const init = initScript();
  app.get('/documentation/json', async (_request, reply) => reply.type('application/json').send(openapiDocument));
  app.get('/documentation', async (_request, reply) => reply.type('text/html; charset=utf-8').send(page));
  app.get('/documentation/init.js', async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(init));
  app.get<{ Params: { file: string } }>('/documentation/static/:file', async (request, reply) => {
    const asset = assets.get(request.params.file);
    if (asset === undefined) throw new GatewayError('NOT_FOUND', `No documentation asset ${request.params.file}`);
    return reply.type(asset.type).header('cache-control', 'public, max-age=86400').send(asset.body);
  });
}
