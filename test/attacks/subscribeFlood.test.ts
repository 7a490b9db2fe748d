/**
 * Attack: one websocket, 5,000 subscribe messages. On `/ws` and on graphql-ws every message is counted by the
 * rate limiter (only the upgrade used to be), and a burst cannot open more subscriptions than the per-socket
 * cap (the cap used to be checked before an await, so a burst passed it). Also: one client opening more sockets
 * than its cap.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSurfaceLimits } from '../../src/server/config.js';
import { insertRequest } from '../../src/store/requests.repository.js';
import { newRequest } from '../store/requestFixture.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { connectRaw, wsUrlOf } from '../events/clients.js';
import { rawDataText } from '../../src/ws/rawData.js';

const perMinute = 1_000;
const maxSubscriptions = 100;
let gateway: TestGateway;
const ids: string[] = [];
beforeAll(async () => {
  gateway = await startTestGateway({
    rateLimit: { enabled: true, windowSeconds: 60, anonymousPerMinute: perMinute, keyPerMinute: 600_000 },
    surfaces: { ...defaultSurfaceLimits, wsMaxSubscriptions: maxSubscriptions, wsConnectionsPerClient: 4 },
    // The test plays several clients through a trusted proxy (itself), one X-Forwarded-For address each.
    trustProxy: ['127.0.0.1'],
  });
  for (let i = 0; i < 150; i++) {
    const request = newRequest();
    await insertRequest(gateway.server.database.db, request);
    ids.push(request.id);
  }
});
afterAll(async () => {
  await gateway?.stop();
});

/**
 * The limiter counts in fixed one-minute windows (Unix time): a burst that straddles a window's end is admitted up
 * to the limit in each. A burst here starts with at least 10 s of its window left.
 */
async function awayFromWindowEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

/** Waits until `count()` reaches `n`: every message has been answered. */
const answered = (count: () => number, n: number) =>
  expect.poll(count, { timeout: 45_000, interval: 200 }).toBeGreaterThanOrEqual(n);

describe('websocket message floods', () => {
  it('/ws: a burst of 5,000 subscribes opens at most the cap and the rest are rate limited', async () => {
    const client = await connectRaw(wsUrlOf(gateway.url, '/ws'));
    await client.next((m) => m.type === 'connection' && m.status === 'ready');
    await awayFromWindowEnd();
    for (let i = 0; i < 5_000; i++)
      client.send({ type: 'subscribe', event: 'request.status.updated', filters: { id: ids[i % ids.length] } });
    // Each subscribe is answered once (an ack or an error frame), besides the `ready` frame.
    await answered(() => client.messages.filter((m) => m.type === 'subscribe' || m.type === 'error').length, 5_000);
    const acks = new Set(
      client.messages.filter((m) => m.type === 'subscribe' && m.status === 'success').map((m) => m.data.filters.id),
    );
    const limited = client.messages.filter((m) => m.status === 'error' && m.data?.errorCode === 'RATE_LIMITED');
    expect(acks.size).toBe(maxSubscriptions);
    expect(limited.length).toBeGreaterThanOrEqual(5_000 - perMinute);
    await client.close();
  });

  it('graphql-ws: 5,000 subscribe messages on one socket are counted and capped', async () => {
    const socket = new WebSocket(wsUrlOf(gateway.url, '/graphql'), 'graphql-transport-ws', {
      headers: { 'x-forwarded-for': '198.51.100.2' },
    });
    const messages: Array<Record<string, any>> = [];
    socket.on('message', (data) => messages.push(JSON.parse(rawDataText(data))));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await expect.poll(() => messages.some((m) => m.type === 'connection_ack')).toBe(true);
    const query = 'subscription($id: ID!) { requestStatus(requestId: $id) { requestId status } }';
    await awayFromWindowEnd();
    for (let i = 0; i < 5_000; i++) {
      socket.send(
        JSON.stringify({
          id: String(i),
          type: 'subscribe',
          payload: { query, variables: { id: ids[i % ids.length] } },
        }),
      );
    }
    // Each operation is answered (an error, or the first status of an opened subscription).
    await answered(
      () => new Set(messages.filter((m) => m.type === 'error' || m.type === 'next').map((m) => m.id)).size,
      5_000,
    );
    const opened = new Set(messages.filter((m) => m.type === 'next').map((m) => m.id));
    const limited = messages.filter((m) => m.type === 'error' && m.payload?.[0]?.extensions?.code === 'RATE_LIMITED');
    expect(opened.size).toBeLessThanOrEqual(maxSubscriptions);
    expect(limited.length).toBeGreaterThanOrEqual(5_000 - perMinute);
    socket.close();
  });

  it("refuses a client's fifth socket", async () => {
    const headers = { 'x-forwarded-for': '198.51.100.3' };
    const connect = () => new WebSocket(wsUrlOf(gateway.url, '/ws'), { headers });
    const sockets = [connect(), connect(), connect(), connect()];
    await Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('message', resolve))));
    const fifth = connect();
    const code = await new Promise<number>((resolve) => fifth.once('close', (closeCode) => resolve(closeCode)));
    expect(code).toBe(1008);
    for (const socket of sockets) expect(socket.readyState).toBe(WebSocket.OPEN);
    for (const socket of sockets) socket.close();
  });
});
