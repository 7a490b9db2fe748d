import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../core/errors.js';

const assetTypes = {
  'explorer.js': 'text/javascript; charset=utf-8',
  'format.js': 'text/javascript; charset=utf-8',
  'words.js': 'text/javascript; charset=utf-8',
  'explorer.css': 'text/css; charset=utf-8',
} as const;

const explorerFile = (name: string): Buffer => readFileSync(new URL(`./explorer/${name}`, import.meta.url));

/**
 * The explorer, served by the gateway itself: `/explorer` (latest requests, paged; search by request id, address,
 * transaction hash or deposit address) and `/explorer/requests/{requestId}` (timeline, transactions, route, fees,
 * live status, why a request is held or was refunded). Plain HTML, CSS and browser JavaScript modules from
 * `src/server/explorer/`, no build step; the page only reads the public API (`/chains`, `/requests/v3`, `/ready`)
 * and the status stream (`/ws`), so it needs nothing from the internet.
 */
export function registerExplorer(app: FastifyInstance): void {
  const page = explorerFile('explorer.html');
  const assets = new Map(Object.entries(assetTypes).map(([name, type]) => [name, { type, body: explorerFile(name) }]));
  const sendPage = async (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply.type('text/html; charset=utf-8').send(page);
  app.get('/explorer', sendPage);
  app.get('/explorer/requests/:requestId', sendPage);
  app.get<{ Params: { file: string } }>('/explorer/assets/:file', async (request, reply) => {
    const asset = assets.get(request.params.file);
    if (asset === undefined) throw new GatewayError('NOT_FOUND', `No explorer asset ${request.params.file}`);
    return reply.type(asset.type).header('cache-control', 'no-cache').send(asset.body);
  });
}
