/**
 * Leak: an RPC provider's key sits in its URL (`https://mainnet.example/v3/<key>`), and viem quotes the URL in
 * every error it throws. When the RPC fails, the error is logged; whoever reads the logs must not get the key.
 * The failure is real: viem's own HTTP transport against a port where nothing listens.
 */
import { Writable } from 'node:stream';
import { createPublicClient, http } from 'viem';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/server/logger.js';

const providerKey = 'sk_live_0123456789abcdefPROVIDERKEY';

describe('RPC errors in logs', () => {
  it("logs the failure without the RPC URL's key, however it is logged", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger({ logLevel: 'info', logFormat: 'json' }, destination);
    const client = createPublicClient({
      transport: http(`http://127.0.0.1:1/v3/${providerKey}?apikey=${providerKey}`, { retryCount: 0 }),
    });
    const error = await client.getBlockNumber().then(
      () => expect.unreachable('nothing listens on port 1'),
      (failure: unknown) => failure as Error,
    );
    expect(error.message).toContain(providerKey); // viem does quote it

    // As the solver and the watchers log errors (a serialised `err`), in a message, and in a field.
    log.warn({ err: error, chainId: 1 }, 'deposit watcher poll failed; retrying on the next poll');
    log.error(`fill failed: ${error.message}`);
    log.info({ rpc: (error as Error & { url?: string }).url }, 'rpc');
    await new Promise((resolve) => setImmediate(resolve));

    const output = lines.join('');
    expect(lines).toHaveLength(3);
    expect(output).not.toContain(providerKey);
    expect(output).not.toContain('PROVIDERKEY');
    // What helps an operator stays: the failure and the host it concerned.
    expect(output).toContain('HTTP request failed');
    expect(output).toContain('http://127.0.0.1:1/[redacted]');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });
});
