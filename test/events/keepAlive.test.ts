/**
 * `/ws` keep-alive with a short ping interval, on a bare Fastify app: the server pings, a client that answers
 * stays connected, one that does not (autoPong off) is terminated after the next interval.
 */
import type { AddressInfo } from 'node:net';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerStatusWebSocket } from '../../src/ws/statusSocket.js';
import { makeChainConfig } from '../helpers/chainConfig.js';
import { makeCore } from '../graphql/harness.js';
import { rawDataText } from '../../src/ws/rawData.js';

let app: FastifyInstance;
let url: string;
let dispose: () => Promise<void>;

beforeAll(async () => {
  const { core } = makeCore([makeChainConfig(10)]);
  app = Fastify();
  await app.register(websocket);
  dispose = await registerStatusWebSocket(app, core, { pingIntervalMs: 50 });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}/ws`;
});
afterAll(async () => {
  await dispose?.();
  await app?.close();
});

const open = async (options: WebSocket.ClientOptions = {}): Promise<WebSocket> => {
  const socket = new WebSocket(url, options);
  await new Promise((resolve) => socket.once('message', resolve)); // connection ready
  return socket;
};

describe('/ws keep-alive', () => {
  it('pings; a client that answers stays open', async () => {
    const socket = await open();
    let pings = 0;
    socket.on('ping', () => void pings++);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pings).toBeGreaterThanOrEqual(3);
    expect(socket.readyState).toBe(WebSocket.OPEN);
    socket.close();
  });

  it('terminates a client that does not answer pings', async () => {
    const socket = await open({ autoPong: false });
    const code = await new Promise<number>((resolve) => socket.once('close', (c) => resolve(c)));
    expect(code).toBe(1006);
  });

  it('without an event bus, subscribe answers SERVICE_UNAVAILABLE', async () => {
    const socket = await open();
    const reply = new Promise<Record<string, any>>((resolve) =>
      socket.once('message', (data) => resolve(JSON.parse(rawDataText(data)))),
    );
    socket.send(
      JSON.stringify({ type: 'subscribe', event: 'request.status.updated', filters: { id: `0x${'ab'.repeat(32)}` } }),
    );
    expect(await reply).toMatchObject({
      type: 'subscribe',
      status: 'error',
      data: { errorCode: 'SERVICE_UNAVAILABLE' },
    });
    socket.close();
  });
});
