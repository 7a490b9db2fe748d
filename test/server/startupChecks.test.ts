/**
 * Start-up checks, each with the misconfiguration that triggers it, on one devnet: an RPC that answers for another
 * chain and a contract address without code (the solver does not follow those chains, quotes through them are
 * refused), a solver key that does not own the contracts (nothing is served, `/ready` says why), a revoked token
 * approval (quotes delivering the token are refused, a paid request is held rather than refunded, and
 * `approveFillTokens` — `npm run approve` — repairs it), and a stale price feed (`/ready` degraded, naming the feed).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestClient, createWalletClient, erc20Abi, http, parseEther, zeroAddress, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { approveFillTokens } from '../../src/chain/startupChecks.js';
import type { ChainConfig } from '../../src/core/chains/types.js';
import type { GatewayConfig } from '../../src/server/config.js';
import { createServer, type GatewayServer } from '../../src/server/createServer.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

const A = 31337;
const B = 31338;
const C = 31339;

let gateway: TestGateway;
let chainB: DevnetChain;
let chainC: DevnetChain;
let user: DevnetAccount;

beforeAll(async () => {
  // Approvals and feeds are checked again every half second: the test waits for the gateway to see each change.
  gateway = await startTestGateway({}, { server: { chainCheckIntervalMs: 500 } });
  [, chainB, chainC] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain, DevnetChain];
  user = gateway.devnet.descriptor.accounts[0]!;
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

type Checks = Record<string, { ok: boolean; message?: string }>;

async function readiness(url: string): Promise<{ status: number; body: { status: string; checks: Checks } }> {
  const { status, body } = await call(url, 'getReadiness');
  return { status, body };
}

/** A second gateway on the same devnet with a changed configuration, started and stopped around `use`. */
async function withGateway(
  change: (config: GatewayConfig) => GatewayConfig,
  use: (server: GatewayServer, url: string) => Promise<void>,
) {
  const server = await createServer(change(gateway.config));
  try {
    const url = await server.start();
    await use(server, url);
  } finally {
    await server.stop();
  }
}

const quoteBody = (origin: number, destination: number, destinationCurrency: Address = zeroAddress) => ({
  user: user.address,
  originChainId: origin,
  destinationChainId: destination,
  tradeType: 'EXACT_INPUT',
  originCurrency: zeroAddress,
  destinationCurrency,
  amount: parseEther('0.01').toString(),
});

describe('start-up checks', () => {
  it('an RPC of another chain, or a contract without code: that chain is not followed and quotes through it are refused', async () => {
    const withChanges = (chain: ChainConfig): ChainConfig =>
      chain.id === B
        ? // Chain B's entry points at chain C's node.
          { ...chain, httpRpcUrl: chainC.rpcUrl, wsRpcUrl: chainC.rpcUrl.replace('http', 'ws'), pushHeads: false }
        : chain.id === C
          ? { ...chain, contracts: { ...chain.contracts, receiver: '0x000000000000000000000000000000000000dEaD' } }
          : chain;
    await withGateway(
      (config) => ({ ...config, chains: config.chains.map(withChanges) }),
      async (server, url) => {
        const ready = await readiness(url);
        expect(ready.body.checks[`solver:${B}`]?.ok).toBe(false);
        expect(ready.body.checks[`solver:${B}`]?.message).toMatch(new RegExp(`reports chain id ${C}, expected ${B}`));
        expect(ready.body.checks[`solver:${C}`]?.message).toMatch(
          /contracts\.receiver 0x000000000000000000000000000000000000dEaD has no code/,
        );
        expect(ready.body.checks[`solver:${A}`]).toBeUndefined();

        // The solver follows chain A only: nothing of chain C's node is recorded as chain B's.
        expect([...server.solver!.watchers.keys()]).toEqual([A]);

        for (const [origin, destination, other] of [
          [A, B, B],
          [B, A, B],
          [A, C, C],
        ] as const) {
          const refused = await call(url, 'getQuote', { body: quoteBody(origin, destination) });
          expect(refused.status, JSON.stringify(refused.body)).toBe(400);
          expect(refused.body.errorCode).toBe('CHAIN_DISABLED');
          expect(refused.body.message).toMatch(new RegExp(`chain ${other} .*out of service`));
        }
        const health = await call(url, 'getChainHealth', { query: { chainId: String(C) } });
        expect(health.body).toEqual({ healthy: false });
      },
    );
  });

  it('a solver key that does not own the contracts: no chain is served and /ready says whose key it is', async () => {
    const wrong = gateway.devnet.descriptor.accounts[1]!;
    await withGateway(
      (config) => ({ ...config, solverPrivateKey: wrong.privateKey }),
      async (server, url) => {
        const ready = await readiness(url);
        expect(ready.status).toBe(200);
        expect(ready.body.status).toBe('degraded');
        for (const id of [A, B, C]) {
          expect(ready.body.checks[`solver:${id}`]?.message).toContain(
            `is owned by ${gateway.devnet.descriptor.solver.address}, not by the solver ${wrong.address}`,
          );
        }
        expect(server.solver!.watchers.size).toBe(0);
        const refused = await call(url, 'getQuote', { body: quoteBody(A, B) });
        expect(refused.status).toBe(400);
        expect(refused.body.errorCode).toBe('CHAIN_DISABLED');
        expect(refused.body.message).toMatch(
          /GATEWAY_SOLVER_PRIVATE_KEY is not the key the contracts were deployed for/,
        );
      },
    );
  });

  it('a revoked approval: quotes delivering the token are refused, a paid request is held, npm run approve repairs it', async () => {
    expect((await readiness(gateway.url)).body.status).toBe('ready');
    const usdcB = tokenOf(chainB, 'USDC');
    const recipient: Address = '0x00000000000000000000000000000000a11ce001';
    // Quoted while the approval is there; paid after it is revoked.
    const quote = await requestQuote(gateway, user, {
      originCurrency: zeroAddress,
      destinationCurrency: usdcB,
      recipient,
      amount: parseEther('0.01').toString(),
    });
    const requestId = quote.steps.at(-1)!.requestId;

    const solverKey = gateway.devnet.descriptor.solver.privateKey;
    const solverWallet = createWalletClient({
      account: privateKeyToAccount(solverKey),
      chain: devnetViemChain(chainB),
      transport: http(chainB.rpcUrl),
    });
    const revoke = await solverWallet.writeContract({
      address: usdcB,
      abi: erc20Abi,
      functionName: 'approve',
      args: [chainB.contracts.onlyOwnerMulticaller, 0n],
    });
    await publicClientOf(chainB).waitForTransactionReceipt({ hash: revoke });

    const key = `approval:${B}:USDC`;
    const seen = await vi.waitFor(
      async () => {
        const ready = await readiness(gateway.url);
        expect(ready.body.checks[key]?.ok).toBe(false);
        return ready;
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(seen.status).toBe(200);
    expect(seen.body.status).toBe('degraded');
    expect(seen.body.checks[key]?.message).toMatch(
      /approval of USDC .* for the fill contract .* is 0, below its balance/,
    );

    const refused = await call(gateway.url, 'getQuote', { body: quoteBody(A, B, usdcB) });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.errorCode).toBe('ROUTE_TEMPORARILY_RESTRICTED');
    expect(refused.body.message).toMatch(/cannot deliver USDC on chain 31338/);
    // Other tokens of the chain still serve.
    await requestQuote(gateway, user, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
    });

    // The user pays the earlier quote: the solver holds it (no revert, no refund) while the approval is missing.
    await executeSteps(gateway, quote.steps, user);
    await vi.waitFor(
      async () => expect((await readiness(gateway.url)).body.checks[`fills:${B}`]?.message).toMatch(/USDC/),
      { timeout: 20_000, interval: 200 },
    );
    expect((await waitForStatus(gateway, requestId, ['pending'])).status).toBe('pending');
    const delivered = () =>
      publicClientOf(chainB).readContract({
        address: usdcB,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [recipient],
      });
    expect(await delivered()).toBe(0n);

    // `npm run approve`: approves what is missing, keeps what is there; a second run changes nothing.
    const clientB = publicClientOf(chainB);
    const chainConfigB = gateway.config.chains.find((chain) => chain.id === B)!;
    const first = await approveFillTokens(chainConfigB, clientB, privateKeyToAccount(solverKey));
    expect(first.filter((outcome) => outcome.action === 'approved').map((outcome) => outcome.symbol)).toEqual(['USDC']);
    expect(first.every((outcome) => outcome.action !== 'failed')).toBe(true);
    const second = await approveFillTokens(chainConfigB, clientB, privateKeyToAccount(solverKey));
    expect(second.every((outcome) => outcome.action === 'kept')).toBe(true);

    // The held request is filled: the recipient gets what was quoted, and nothing was refunded.
    await waitForStatus(gateway, requestId, ['success']);
    expect(await delivered()).toBe(BigInt(quote.details.currencyOut.amount));
    await vi.waitFor(async () => expect((await readiness(gateway.url)).body.status).toBe('ready'), {
      timeout: 20_000,
      interval: 200,
    });
  });

  it('a stale price feed makes /ready degraded, naming the feed', async () => {
    // Chain C's clock runs past the devnet feeds' maximum age (a month).
    const testClient = createTestClient({
      mode: 'anvil',
      chain: devnetViemChain(chainC),
      transport: http(chainC.rpcUrl),
    });
    await testClient.increaseTime({ seconds: 40 * 86_400 });
    await testClient.mine({ blocks: 1 });
    const ready = await vi.waitFor(
      async () => {
        const answer = await readiness(gateway.url);
        expect(answer.body.checks[`price:${C}:ETH`]?.ok).toBe(false);
        return answer;
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('degraded');
    expect(ready.body.checks[`price:${C}:ETH`]?.message).toContain(
      `price feed ${chainC.nativePriceFeed} of ETH on chain ${C} is stale`,
    );
    expect(ready.body.checks[`price:${A}:ETH`]).toBeUndefined();
  });
});
