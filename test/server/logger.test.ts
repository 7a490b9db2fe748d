import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { createLogger } from '../../src/server/logger.js';

/** A stream that keeps what it is given. */
function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

const requestId = `0x${'ab'.repeat(32)}`;

it('pretty: one readable line per entry, the request id first, other fields after the message', async () => {
  const out = capture();
  const log = createLogger({ logLevel: 'info', logFormat: 'pretty' }, out.stream);
  log.info({ requestId, status: 'success' }, 'request status');
  log.info({ chainId: 31337 }, 'deposit watcher: RPC answers again');
  await new Promise((resolve) => setImmediate(resolve));
  const lines = out.text().trimEnd().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(
    new RegExp(`^\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] INFO: ${requestId} request status \\{"status":"success"\\}$`),
  );
  expect(lines[1]).toMatch(/INFO: deposit watcher: RPC answers again \{"chainId":31337\}$/);
});

it('json: one JSON object per line with the request id as a field', async () => {
  const out = capture();
  const log = createLogger({ logLevel: 'info', logFormat: 'json' }, out.stream);
  log.info({ requestId, status: 'success' }, 'request status');
  await new Promise((resolve) => setImmediate(resolve));
  expect(JSON.parse(out.text())).toMatchObject({
    level: 30,
    requestId,
    status: 'success',
    msg: 'request status',
    service: 'intent-gateway',
  });
});
