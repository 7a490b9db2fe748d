import { toUsdMicros, type UsdPrice } from '../../core/market.js';
import type { SentReceipt } from '../../core/ports/solver.js';
import type { SenderState } from './state.js';

export interface GasValue {
  /** Starts a price read when none is under way, without waiting: a send does so while its transaction travels. */
  readAhead(): void;
  /** USD value (micro-USD) of a receipt's gas (and L1 data fee) at the native price of the moment, or null. */
  usdMicros(receipt: SentReceipt): Promise<bigint | null>;
}

/**
 * The USD value of mined transactions' gas, for the ledger, from `nativeUsdPrice` (the chain's native currency).
 * The price is read in the background: a receipt takes the last price read, or waits for the first read. Absent
 * or failing: null.
 */
export function createGasValue(
  state: SenderState,
  nativeDecimals: number,
  nativeUsdPrice: (() => Promise<UsdPrice>) | undefined,
): GasValue {
  /** The last native price read, and the read under way. */
  let nativePrice: UsdPrice | undefined;
  let priceRead: Promise<void> | undefined;
  const readPrice = (): Promise<void> =>
    (priceRead ??= (async () => {
      try {
        nativePrice = await nativeUsdPrice!();
      } catch (error) {
        state.log.debug({ ...state.scope, err: error }, 'native price not read; gas is recorded without its USD value');
      } finally {
        priceRead = undefined;
      }
    })());
  return {
    readAhead() {
      if (nativeUsdPrice !== undefined) void readPrice();
    },
    async usdMicros(receipt) {
      if (nativeUsdPrice === undefined) return null;
      if (nativePrice === undefined) await readPrice();
      else void readPrice();
      if (nativePrice === undefined) return null;
      return toUsdMicros(
        receipt.gasUsed * receipt.effectiveGasPrice + (receipt.l1Fee ?? 0n),
        nativeDecimals,
        nativePrice,
      );
    },
  };
}
