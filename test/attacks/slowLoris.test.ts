/**
 * Attack: slow-loris clients that open HTTP connections and never finish them (a header line every 200 ms, a
 * body byte every 200 ms) or park an idle keep-alive connection. The server closes each one on its own.
 * The deadlines are configured short here; each test's own timeout (20 s) is far below Node's defaults, which
 * is what today's defaults would have needed (60 s for headers, never for a body, 72 s idle).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSurfaceLimits } from '../../src/server/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
const sockets: Socket[] = [];
beforeAll(async () => {
  gateway = await startTestGateway({
    surfaces: {
      ...defaultSurfaceLimits,
      httpHeadersTimeoutMs: 1_000,
      httpRequestTimeoutMs: 2_000,
      httpKeepAliveTimeoutMs: 1_000,
    },
  });
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await gateway?.stop();
});

/** Opens a raw TCP connection to the gateway; resolves with the socket and a promise of everything read until the server closes it. */
async function open(): Promise<{ socket: Socket; closed: Promise<string> }> {
  const { hostname, port } = new URL(gateway.url);
  const socket = connect({ host: hostname, port: Number(port) });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  return { socket, closed };
}

/** Writes `next()` every 200 ms until the socket closes. */
function dribble(socket: Socket, next: () => string): void {
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) clearInterval(timer);
    else socket.write(next());
  }, 200);
  socket.once('close', () => clearInterval(timer));
}

describe('slow clients', () => {
  it('closes a connection whose headers never end', async () => {
    const { socket, closed } = await open();
    socket.write('GET /chains HTTP/1.1\r\nHost: gateway\r\n');
    let n = 0;
    dribble(socket, () => `X-Slow-${n++}: x\r\n`);
    const received = await closed;
    expect(received).toMatch(/^HTTP\/1\.1 408|^$/);
  }, 20_000);

  it('closes a connection whose body never ends', async () => {
    const { socket, closed } = await open();
    socket.write(
      'POST /quote/v2 HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    );
    dribble(socket, () => ' ');
    const received = await closed;
    expect(received).not.toMatch(/^HTTP\/1\.1 200/);
  }, 20_000);

  it('closes an idle keep-alive connection after answering', async () => {
    const { socket, closed } = await open();
    socket.write('GET /chains HTTP/1.1\r\nHost: gateway\r\nConnection: keep-alive\r\n\r\n');
    expect(await closed).toMatch(/^HTTP\/1\.1 200/);
  }, 20_000);
});
