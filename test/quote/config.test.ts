/** `GET /config/v2`: route capacity read from the chains, the indicative fee, and the user's limits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, zeroAddress } from 'viem';
import type { DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf, requestQuote, tokenOf } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;

beforeAll(async () => {
  gateway = await startTestGateway({ solverEnabled: false });
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
});
afterAll(async () => {
  await gateway?.stop();
});

const config = (query: Record<string, string>) => call(gateway.url, 'getConfig', { query });

describe('GET /config/v2', () => {
  it('reports the solver balance on the destination and the user balance on the origin, in smallest units', async () => {
    const user = gateway.devnet.descriptor.accounts[0]!.address;
    const { status, body } = await config({
      originChainId: String(chainA.chainId),
      destinationChainId: String(chainB.chainId),
      user,
      currency: 'usdc',
    });
    expect(status).toBe(200);
    const solver = gateway.devnet.descriptor.solver.address;
    const readBalance = (chain: DevnetChain, owner: `0x${string}`) =>
      publicClientOf(chain).readContract({
        address: tokenOf(chain, 'USDC'),
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [owner],
      });
    expect(body).toMatchObject({ enabled: true, supportsExternalLiquidity: false, solver: { address: solver } });
    expect(BigInt(body.solver.balance)).toBe(await readBalance(chainB, solver));
    expect(body.solver.capacityPerRequest).toBe(body.solver.balance);
    expect(BigInt(body.user.balance)).toBe(await readBalance(chainA, user));
    // The user holds less than the solver can deliver, so their balance is the limit.
    expect(body.user.maxBridgeAmount).toBe(body.user.balance);
  });

  it('quotes the indicative fee of a transfer: what an EXACT_INPUT bridge of the route keeps', async () => {
    const { body } = await config({
      originChainId: String(chainA.chainId),
      destinationChainId: String(chainB.chainId),
    });
    expect(BigInt(body.fee)).toBeGreaterThan(0n);
    const account = gateway.devnet.descriptor.accounts[0]!;
    const quote = await requestQuote(gateway, account, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: '50000000000000000',
    });
    const kept = BigInt(quote.details.currencyIn.amount) - BigInt(quote.details.currencyOut.amount);
    // Same route, same cached gas estimate and gas price within a block: the same execution fee.
    expect(kept).toBe(BigInt(body.fee));
  });

  it('answers unknown chains and currencies with the error shape', async () => {
    const unknownChain = await config({ originChainId: '999', destinationChainId: String(chainB.chainId) });
    expect(unknownChain).toMatchObject({ status: 400, body: { errorCode: 'UNSUPPORTED_CHAIN' } });
    const unknownCurrency = await config({
      originChainId: String(chainA.chainId),
      destinationChainId: String(chainB.chainId),
      currency: 'doge',
    });
    expect(unknownCurrency).toMatchObject({ status: 400, body: { errorCode: 'UNSUPPORTED_CURRENCY' } });
    const badUser = await config({
      originChainId: String(chainA.chainId),
      destinationChainId: String(chainB.chainId),
      user: 'nobody',
    });
    expect(badUser).toMatchObject({ status: 400, body: { errorCode: 'INVALID_ADDRESS' } });
  });
});
