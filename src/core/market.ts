import type { SignedAuthorizationInput } from './ports/solver.js';
import type { Address, Hex } from 'viem';
import type { CurrencyConfig } from './chains/types.js';
import { GatewayError } from './errors.js';
import { pow10 } from './powersOfTen.js';

/** A USD price of one whole unit: `answer / 10^decimals` USD (an AggregatorV3 answer, or a fixed price). */
export interface UsdPrice {
  answer: bigint;
  decimals: number;
  /** Unix seconds of the answer (the feed's `updatedAt`; the read time for fixed prices). */
  updatedAt: number;
}

/** A transaction to estimate or simulate. */
export interface TransactionRequest {
  from: Address;
  to: Address;
  data: Hex;
  value: bigint;
  /** EIP-7702 authorizations applied for the estimate (a gasless batch). */
  authorizationList?: SignedAuthorizationInput[];
}

/** How a user's balance or allowance may be read. */
export interface WalletReadOptions {
  /**
   * The value may come from a read made earlier at the same chain head: while the chain's head feed is live and
   * has pushed no head since that read began, the chain's state at `latest` is the one that read saw. Without a
   * live feed the value is read now. For what a quote shows the user (its balance, the approval step); never
   * for the solver's own checks.
   */
  sameHead?: boolean;
}

/**
 * What the core reads from chains: prices, gas, balances, allowances and gas estimates. The implementation
 * (`src/chain/market.ts`) batches concurrent reads through Multicall3 and caches what is the same for every
 * caller (prices, gas prices, the solver's balances) for about one block.
 *
 * Errors are `GatewayError`s: `PRICE_FETCH_FAILED` (503) when a price cannot be read, is stale or is not
 * positive; `UNSUPPORTED_CURRENCY` when a currency has no price source; `RPC_HTTP_ERROR` (502) and
 * `REQUEST_TIMED_OUT` (504) when a chain's RPC fails or times out; `DESTINATION_TX_FAILED` (400, revert reason in
 * `data`) when an estimated transaction reverts; `UNSUPPORTED_CHAIN` for a chain that is not configured.
 */
export interface MarketData {
  /** USD price of one whole unit of `currency` on chain `chainId`. */
  usdPrice(chainId: number, currency: CurrencyConfig): Promise<UsdPrice>;
  /** Gas price (wei) a transaction sent now would pay on the chain; cached for about one block. */
  gasPrice(chainId: number): Promise<bigint>;
  /**
   * Balance of `owner` in `token` (the zero address is the native currency), read now; with `sameHead`, possibly
   * taken from a read of the same chain head (see `WalletReadOptions`).
   */
  balanceOf(chainId: number, owner: Address, token: Address, options?: WalletReadOptions): Promise<bigint>;
  /** The solver's balance of `token`; cached for about one block (see `invalidateSolverBalances`). */
  solverBalance(chainId: number, token: Address): Promise<bigint>;
  /** Forgets the cached solver balances of a chain (after the solver spends or receives). */
  invalidateSolverBalances(chainId: number): void;
  /** ERC-20 allowance `owner` gave `spender`, read now; with `sameHead`, as `balanceOf`. */
  allowance(
    chainId: number,
    owner: Address,
    token: Address,
    spender: Address,
    options?: WalletReadOptions,
  ): Promise<bigint>;
  /**
   * Whether `signature` is `signer`'s EIP-191 signature of the 32 bytes `hash`: an EOA's, or a contract wallet's
   * by EIP-1271 `isValidSignature` on chain `chainId`.
   */
  verifyMessage(chainId: number, params: { signer: Address; hash: Hex; signature: Hex }): Promise<boolean>;
  /**
   * Whether `signature` is `signer`'s signature of the digest `hash` itself (no EIP-191 prefix: an EIP-712 typed
   * data hash): an EOA's, or a contract wallet's by EIP-1271 `isValidSignature` on chain `chainId`.
   */
  verifyHash(chainId: number, params: { signer: Address; hash: Hex; signature: Hex }): Promise<boolean>;
  /**
   * Gas units of `tx` (`eth_estimateGas`), simulated as the solver sends it: from `tx.from`, with the fee caps a
   * transaction sent now carries (so `tx.gasprice` is the real one, never 0); a revert fails with
   * `DESTINATION_TX_FAILED`.
   */
  estimateGas(chainId: number, tx: TransactionRequest): Promise<bigint>;
  /**
   * The L1 data fee (wei) an OP-stack chain charges a transaction whose unsigned RLP encoding is `serializedTx`,
   * besides its gas: the GasPriceOracle predeploy's `getL1Fee`, read now. Only for `op-stack` chains.
   */
  l1DataFee(chainId: number, serializedTx: Hex): Promise<bigint>;
}

/** USD 1 in micro-USD, the unit of every USD amount inside the core. */
const USD_MICROS = 1_000_000n;

export type Rounding = 'down' | 'up';

const divide = (numerator: bigint, denominator: bigint, rounding: Rounding): bigint =>
  rounding === 'down' ? numerator / denominator : (numerator + denominator - 1n) / denominator;

/** USD value in micro-USD of `amount` smallest units of a currency with `decimals` at `price`. */
export function toUsdMicros(amount: bigint, decimals: number, price: UsdPrice, rounding: Rounding = 'down'): bigint {
  const negative = amount < 0n;
  const magnitude = divide(
    (negative ? -amount : amount) * price.answer * USD_MICROS,
    pow10(decimals + price.decimals),
    negative ? (rounding === 'down' ? 'up' : 'down') : rounding,
  );
  return negative ? -magnitude : magnitude;
}

/** Smallest units of a currency with `decimals` worth `usdMicros` at `price`. */
export function fromUsdMicros(usdMicros: bigint, decimals: number, price: UsdPrice, rounding: Rounding = 'up'): bigint {
  if (price.answer <= 0n) throw new GatewayError('PRICE_FETCH_FAILED', 'Price must be positive');
  return divide(usdMicros * pow10(decimals + price.decimals), price.answer * USD_MICROS, rounding);
}

/** A currency amount priced: what `convert` needs of each side. */
export interface PricedCurrency {
  decimals: number;
  price: UsdPrice;
}

/**
 * Converts `amount` smallest units of `from` into smallest units of `to` at their USD prices, exactly:
 * `amount * fromAnswer * 10^(toDecimals + toPriceDecimals) / (toAnswer * 10^(fromDecimals + fromPriceDecimals))`.
 */
export function convert(amount: bigint, from: PricedCurrency, to: PricedCurrency, rounding: Rounding = 'down'): bigint {
  if (to.price.answer <= 0n || from.price.answer <= 0n)
    throw new GatewayError('PRICE_FETCH_FAILED', 'Price must be positive');
  return divide(
    amount * from.price.answer * pow10(to.decimals + to.price.decimals),
    to.price.answer * pow10(from.decimals + from.price.decimals),
    rounding,
  );
}

/** The price of a currency, or `UNSUPPORTED_CURRENCY` when it has no price source. */
export function requirePriceSource(currency: CurrencyConfig, chainId: number): NonNullable<CurrencyConfig['price']> {
  if (currency.price === undefined) {
    throw new GatewayError(
      'UNSUPPORTED_CURRENCY',
      `${currency.symbol} on chain ${chainId} has no price source, so it cannot be priced`,
    );
  }
  return currency.price;
}
