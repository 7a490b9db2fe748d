import type { JsonObject, JsonValue } from '../records/json.js';

/**
 * A request's fee breakdown as stored (`fees_quoted`, `fees_actual`): the quote engine's `FeeBreakdown` with
 * bigints as decimal strings, plus the USD values of the components in micro-USD (`usdMicros`). Only what the
 * history presents is read back.
 */
export interface StoredFees {
  currency: { chainId: number; address: string; decimals: number; symbol: string };
  routeClass: string;
  execution: bigint;
  /** The destination-gas part of the execution fee, micro-USD (the legacy `relayerGas`). */
  destinationGasMicros: bigint;
  swap: bigint;
  platform: bigint;
  platformBps: number;
  app: bigint;
  appFees: Array<{ recipient: string; feeBps: number; amount: bigint }>;
  sponsored: bigint;
  revenueShare: { tier: string | null; shareBps: number; amount: bigint };
  usdMicros: {
    in: bigint;
    out: bigint;
    execution: bigint;
    swap: bigint;
    platform: bigint;
    app: bigint;
    sponsored: bigint;
    /** The swap's whole cost (its fee, and the inventory cap's or the pools' impact); absent on older requests. */
    swapWithImpact?: bigint;
  };
}

class Malformed extends Error {}

const object = (value: JsonValue | undefined): JsonObject => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Malformed();
  return value;
};
const big = (value: JsonValue | undefined): bigint => {
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) return BigInt(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  throw new Malformed();
};
const int = (value: JsonValue | undefined): number => {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^[0-9]+$/.test(value)) return Number(value);
  throw new Malformed();
};
const str = (value: JsonValue | undefined): string => {
  if (typeof value !== 'string') throw new Malformed();
  return value;
};

/**
 * The stored breakdown, or null when there is none or it does not have the expected shape (a row written by
 * another version): the history then shows no fees for it rather than failing the whole page.
 */
export function parseStoredFees(value: JsonObject | null): StoredFees | null {
  if (value === null) return null;
  try {
    const currency = object(value.currency);
    const usd = object(value.usdMicros);
    const parts = object(value.executionParts);
    const share = value.revenueShare === undefined ? null : object(value.revenueShare);
    const appFees = value.appFees === undefined ? [] : value.appFees;
    if (!Array.isArray(appFees)) throw new Malformed();
    return {
      currency: {
        chainId: int(currency.chainId),
        address: str(currency.address),
        decimals: int(currency.decimals),
        symbol: str(currency.symbol),
      },
      routeClass: str(value.routeClass),
      execution: big(value.execution),
      // A permit deposit's origin gas (paid by the gateway) is gas of the execution fee too.
      destinationGasMicros:
        big(parts.destinationGasMicros) + (parts.originGasMicros === undefined ? 0n : big(parts.originGasMicros)),
      swap: big(value.swap),
      platform: big(value.platform),
      platformBps: int(value.platformBps),
      app: big(value.app),
      appFees: appFees.map((entry) => {
        const fee = object(entry);
        return { recipient: str(fee.recipient), feeBps: int(fee.feeBps), amount: big(fee.amount) };
      }),
      sponsored: big(value.sponsored),
      revenueShare:
        share === null
          ? { tier: null, shareBps: 0, amount: 0n }
          : {
              tier: share.tier === null ? null : str(share.tier),
              shareBps: int(share.shareBps),
              amount: big(share.amount),
            },
      usdMicros: {
        in: big(usd.in),
        out: big(usd.out),
        execution: big(usd.execution),
        swap: big(usd.swap),
        platform: big(usd.platform),
        app: big(usd.app),
        sponsored: big(usd.sponsored),
        ...(usd.swapWithImpact === undefined ? {} : { swapWithImpact: big(usd.swapWithImpact) }),
      },
    };
  } catch (error) {
    if (error instanceof Malformed) return null;
    throw error;
  }
}
