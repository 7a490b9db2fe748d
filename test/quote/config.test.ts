/**
 * `GET /config/v2`: route capacity read from the chains, the indicative fee, and the user's limits; and the L1 data
 * fee of an OP-stack destination (the devnet's third chain) in the quote's and the config's execution fee.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, parseTransaction, size, zeroAddress } from 'viem';
import type { DevnetChain } from '../../src/chain/devnet.js';
import { DEVNET_L1_BASE_FEE, GAS_PRICE_ORACLE, OP_STACK_DEVNET_CHAIN_ID } from '../../src/chain/devnetContracts.js';
import { representativeTxBytes, representativePaymentFill } from '../../src/core/quote/fillGas.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { devnetGasPriceOracleAbi } from '../../generated/contracts/index.js';
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

describe('an OP-stack destination (devnet chain 31339, with a GasPriceOracle predeploy)', () => {
  /** USD 3000 per ETH in micro-USD: the devnet's native feed. */
  const ETH_USD_MICROS = 3_000_000_000n;
  const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

  it("charges the fill's L1 data fee, read from the predeploy, on top of its gas", async () => {
    const chainC = gateway.devnet.descriptor.chains[2]!;
    expect(chainC.chainId).toBe(OP_STACK_DEVNET_CHAIN_ID);
    const account = gateway.devnet.descriptor.accounts[0]!;
    const quote = await requestQuote(gateway, account, {
      destinationChainId: chainC.chainId,
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainC, 'USDC'),
      amount: '100000000',
    });
    const request = await getRequest(gateway.server.core.db, quote.steps[0]!.requestId);
    const fees = request!.feesQuoted as {
      execution: string;
      usdMicros: { execution: string };
      executionParts: Record<string, string>;
    };
    const parts = fees.executionParts;

    // The bytes priced are the unsigned EIP-1559 fill the solver sends on chain C; the oracle on chain C prices
    // them at its documented formula, and that is the L1 fee the quote charged.
    const core = gateway.server.core;
    const destination = core.config.chains.find((chain) => chain.id === chainC.chainId)!;
    expect(destination.feeModel).toBe('op-stack');
    const fill = representativePaymentFill(core, destination, tokenOf(chainC, 'USDC'));
    const bytes = representativeTxBytes(destination, fill);
    expect(parseTransaction(bytes)).toMatchObject({
      chainId: chainC.chainId,
      to: fill.to.toLowerCase(),
      data: fill.data,
    });
    const l1Fee = await publicClientOf(chainC).readContract({
      address: GAS_PRICE_ORACLE,
      abi: devnetGasPriceOracleAbi,
      functionName: 'getL1Fee',
      args: [bytes],
    });
    expect(l1Fee).toBe((BigInt(size(bytes)) + 68n) * 16n * DEVNET_L1_BASE_FEE);
    expect(BigInt(parts.l1FeeWei!)).toBe(l1Fee);

    // The destination's part of the fee is the gas plus the L1 fee, rounded up once; the L1 fee alone adds its
    // USD value within that one micro-USD of rounding.
    const gasWei = BigInt(parts.gasUnits!) * BigInt(parts.gasPriceWei!);
    const destinationMicros = BigInt(parts.destinationGasMicros!);
    expect(destinationMicros).toBe(ceilDiv((gasWei + l1Fee) * ETH_USD_MICROS, 10n ** 18n));
    const l1Micros = (l1Fee * ETH_USD_MICROS) / 10n ** 18n;
    expect(l1Micros).toBeGreaterThan(0n);
    const added = destinationMicros - ceilDiv(gasWei * ETH_USD_MICROS, 10n ** 18n);
    expect(added >= l1Micros && added <= l1Micros + 1n, `${added} vs ${l1Micros}`).toBe(true);
    // In USDC (6 decimals at USD 1), one micro-USD is one unit: the fee charged is the USD fee, rounded up.
    expect(BigInt(fees.usdMicros.execution)).toBe(BigInt(parts.flatMicros!) + destinationMicros);
    expect(BigInt(fees.execution)).toBe(BigInt(fees.usdMicros.execution));
    expect(BigInt(quote.details.currencyIn.amount) - BigInt(quote.details.currencyOut.amount)).toBe(
      BigInt(fees.execution),
    );

    // The indicative fee of the same route prices the same L1 fee (the same cached reads within a block).
    const { body } = await config({
      originChainId: String(chainA.chainId),
      destinationChainId: String(chainC.chainId),
      currency: 'usdc',
    });
    expect(BigInt(body.fee)).toBe(BigInt(fees.execution));
  });

  it('prices a fill with calls at the L1 data fee of its own, longer, bytes', async () => {
    const chainC = gateway.devnet.descriptor.chains[2]!;
    const core = gateway.server.core;
    const destination = core.config.chains.find((chain) => chain.id === chainC.chainId)!;
    const merchant = '0x00000000000000000000000000000000003e7c4a';
    const value = 12_000_000_000_000_000n;
    const quote = await requestQuote(gateway, gateway.devnet.descriptor.accounts[0]!, {
      destinationChainId: chainC.chainId,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: value.toString(),
      tradeType: 'EXACT_OUTPUT',
      // 300 bytes of calldata to an account without code: the call succeeds, and the fill carries the bytes.
      txs: [{ to: merchant, value: value.toString(), data: `0x${'5a'.repeat(300)}` }],
    });
    const request = await getRequest(core.db, quote.steps.at(-1)!.requestId);
    const parts = (request!.feesQuoted as { executionParts: Record<string, string> }).executionParts;
    const paymentL1Fee = await publicClientOf(chainC).readContract({
      address: GAS_PRICE_ORACLE,
      abi: devnetGasPriceOracleAbi,
      functionName: 'getL1Fee',
      args: [representativeTxBytes(destination, representativePaymentFill(core, destination, zeroAddress))],
    });
    // At least the 300 bytes more, each priced at 16 L1 gas at the L1 base fee.
    expect(BigInt(parts.l1FeeWei!) - paymentL1Fee).toBeGreaterThanOrEqual(300n * 16n * DEVNET_L1_BASE_FEE);
    const gasWei = BigInt(parts.gasUnits!) * BigInt(parts.gasPriceWei!);
    expect(BigInt(parts.destinationGasMicros!)).toBe(
      ceilDiv((gasWei + BigInt(parts.l1FeeWei!)) * ETH_USD_MICROS, 10n ** 18n),
    );
  });

  it('charges no L1 data fee on an ethereum-model destination', async () => {
    const account = gateway.devnet.descriptor.accounts[0]!;
    const quote = await requestQuote(gateway, account, {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: '100000000',
    });
    const request = await getRequest(gateway.server.core.db, quote.steps[0]!.requestId);
    const parts = (request!.feesQuoted as { executionParts: Record<string, string> }).executionParts;
    expect(parts.l1FeeWei).toBe('0');
    const gasWei = BigInt(parts.gasUnits!) * BigInt(parts.gasPriceWei!);
    expect(BigInt(parts.destinationGasMicros!)).toBe(ceilDiv(gasWei * ETH_USD_MICROS, 10n ** 18n));
  });
});
