/**
 * Attack: a `/ws` client that stops reading while the gateway keeps answering it. Without a limit the server
 * would queue every frame for it in memory; with `GATEWAY_WS_MAX_BUFFERED_BYTES` (here a small limit through the
 * configuration) the socket is dropped once its unsent data passes the limit, and other clients are unaffected.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSurfaceLimits } from '../../src/server/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { connectRaw, wsUrlOf } from '../events/clients.js';

const maxBuffered = 64 * 1024;
let gateway: TestGateway;
const logLines: Array<Record<string, any>> = [];
beforeAll(async () => {
  gateway = await startTestGateway(
    {
      logLevel: 'warn',
      logFormat: 'json',
      rateLimit: { enabled: false, windowSeconds: 60, anonymousPerMinute: 1_000, keyPerMinute: 600_000 },
      surfaces: { ...defaultSurfaceLimits, wsMaxBufferedBytes: maxBuffered },
    },
    { server: { logDestination: { write: (line: string) => void logLines.push(JSON.parse(line)) } } },
  );
});
afterAll(async () => {
  await gateway?.stop();
});

const dropped = () =>
  logLines.filter((line) => line.msg === 'websocket dropped: the client does not read what it is sent');

describe('a /ws client that stops reading', () => {
  it('is dropped once its unsent data passes the limit; a reading client stays connected', async () => {
    const reader = await connectRaw(wsUrlOf(gateway.url, '/ws'));
    await reader.next((m) => m.type === 'connection' && m.status === 'ready');

    const slow = new WebSocket(wsUrlOf(gateway.url, '/ws'));
    await new Promise((resolve, reject) => slow.once('message', resolve).once('error', reject));
    slow.on('error', () => undefined); // the server ends the connection under it
    const closed = new Promise<number>((resolve) => slow.once('close', (code) => resolve(code)));
    slow.pause(); // stop reading: what the server sends stays in its buffers

    // Each message is answered with an error frame that quotes its 50 KB `type`: 40 MB of answers, far more than
    // the kernel's socket buffers hold, so the server's own send buffer must grow past the limit.
    const type = 'x'.repeat(50_000);
    for (let i = 0; i < 800 && dropped().length === 0; i++) {
      if (slow.readyState !== WebSocket.OPEN) break;
      slow.send(JSON.stringify({ type }));
      if (i % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await expect.poll(() => dropped().length, { timeout: 30_000, interval: 100 }).toBe(1);
    expect(dropped()[0]!.bufferedBytes).toBeGreaterThan(maxBuffered);

    slow.resume();
    // Terminated, not closed with a close frame: 1006.
    expect(await closed).toBe(1006);

    // The reading client was not touched.
    reader.send({ type: 'ping' });
    await reader.next((m) => m.type === 'pong');
    await reader.close();
  });
});
