/**
 * A permit deposit is sent, and paid, by the gateway on the origin chain: on an OP-stack origin (devnet chain 31339,
 * with a GasPriceOracle predeploy) the quote's execution fee includes the L1 data fee the oracle charges for that
 * transaction's bytes, besides its gas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTransaction, parseUnits, size, type Hex } from 'viem';
import { devnetGasPriceOracleAbi } from '../../generated/contracts/index.js';
import { DEVNET_L1_BASE_FEE, GAS_PRICE_ORACLE, OP_STACK_DEVNET_CHAIN_ID } from '../../src/chain/devnetContracts.js';
import { representativeTxBytes } from '../../src/core/quote/fillGas.js';
import { PERMIT_DEPOSIT_GAS, representativePermitDeposit } from '../../src/core/permits/typedData.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf, tokenOf } from '../helpers/quote.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(async () => {
  await gateway?.stop();
});

/** The devnet's ETH price (USD 3,000) in micro-USD. */
const ETH_USD_MICROS = 3_000_000_000n;
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

describe('a permit quote from an OP-stack origin', () => {
  it("charges the permit deposit's L1 data fee, read from the origin's predeploy, besides its gas", async () => {
    const [chainA, , chainC] = gateway.devnet.descriptor.chains;
    expect(chainC!.chainId).toBe(OP_STACK_DEVNET_CHAIN_ID);
    const usdcC = tokenOf(chainC!, 'USDC');
    const user = gateway.devnet.descriptor.accounts[0]!;
    const { status, body } = await call(gateway.url, 'getQuote', {
      body: {
        user: user.address,
        originChainId: chainC!.chainId,
        destinationChainId: chainA!.chainId,
        originCurrency: usdcC,
        destinationCurrency: tokenOf(chainA!, 'USDC'),
        amount: parseUnits('10', 6).toString(),
        tradeType: 'EXACT_INPUT',
        usePermit: true,
      },
    });
    expect(status, JSON.stringify(body)).toBe(200);
    const request = await getRequest(gateway.server.core.db, body.steps[0].requestId as Hex);
    const parts = (request!.feesQuoted as { executionParts: Record<string, string> }).executionParts;

    // The bytes priced are the permit deposit the gateway sends to chain C's approval proxy, at its widest.
    const core = gateway.server.core;
    const origin = core.config.chains.find((chain) => chain.id === chainC!.chainId)!;
    expect(origin.feeModel).toBe('op-stack');
    const deposit = representativePermitDeposit('eip3009', origin.contracts.approvalProxy, usdcC);
    const bytes = representativeTxBytes(origin, deposit);
    expect(parseTransaction(bytes)).toMatchObject({ chainId: chainC!.chainId, to: deposit.to.toLowerCase() });
    const l1Fee = await publicClientOf(chainC!).readContract({
      address: GAS_PRICE_ORACLE,
      abi: devnetGasPriceOracleAbi,
      functionName: 'getL1Fee',
      args: [bytes],
    });
    expect(l1Fee).toBe((BigInt(size(bytes)) + 68n) * 16n * DEVNET_L1_BASE_FEE);
    expect(BigInt(parts.originL1FeeWei!)).toBe(l1Fee);

    // The origin part of the fee is the deposit's gas plus its L1 fee, rounded up once.
    const gasWei = PERMIT_DEPOSIT_GAS.eip3009 * (await core.market.gasPrice(chainC!.chainId));
    const originMicros = BigInt(parts.originGasMicros!);
    expect(originMicros).toBe(ceilDiv((gasWei + l1Fee) * ETH_USD_MICROS, 10n ** 18n));
    expect(originMicros - ceilDiv(gasWei * ETH_USD_MICROS, 10n ** 18n)).toBeGreaterThanOrEqual(
      (l1Fee * ETH_USD_MICROS) / 10n ** 18n,
    );
    expect((l1Fee * ETH_USD_MICROS) / 10n ** 18n).toBeGreaterThan(0n);

    // From an origin that is not OP-stack, the deposit pays its gas only.
    const fromA = await call(gateway.url, 'getQuote', {
      body: {
        user: user.address,
        originChainId: chainA!.chainId,
        destinationChainId: chainC!.chainId,
        originCurrency: tokenOf(chainA!, 'USDC'),
        destinationCurrency: usdcC,
        amount: parseUnits('10', 6).toString(),
        tradeType: 'EXACT_INPUT',
        usePermit: true,
      },
    });
    expect(fromA.status, JSON.stringify(fromA.body)).toBe(200);
    const plain = await getRequest(core.db, fromA.body.steps[0].requestId as Hex);
    const plainParts = (plain!.feesQuoted as { executionParts: Record<string, string> }).executionParts;
    expect(plainParts.originL1FeeWei).toBeUndefined();
    expect(BigInt(plainParts.originGasMicros!)).toBeGreaterThan(0n);
  });
});
