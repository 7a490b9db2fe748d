import type { SwapRouterKind } from '../dex/routerCalls.js';
import type { Address, Hex } from 'viem';
import type { CrashPoint } from '../faults.js';
import type {
  AppFeeClaimSettings,
  ExecutionRevertSettings,
  GaslessSettings,
  InventorySettings,
  PermitSettings,
  SweepSettings,
} from './settings.js';

/** How a currency's USD price is found. */
export type PriceSource =
  /**
   * An AggregatorV3-style feed on the same chain (`latestRoundData`, `decimals`). An answer older than
   * `maxAgeSeconds` (by the chain's clock) is stale and fails with `PRICE_FETCH_FAILED`; no limit when absent.
   */
  | { kind: 'aggregatorV3'; feed: Address; maxAgeSeconds?: number }
  /**
   * A fixed price, as a decimal string of USD (for stablecoins). With `feed`, the fixed price is still checked
   * against that AggregatorV3 feed on every read: a feed answer older than `maxAgeSeconds`, or more than
   * `maxDeviationBps` (default `DEFAULT_PEG_DEVIATION_BPS`) away from the fixed price (a depeg), fails with
   * `PRICE_FETCH_FAILED` instead of pricing at the fixed value.
   */
  | {
      kind: 'fixed';
      usd: string;
      feed?: Address;
      maxAgeSeconds?: number;
      maxDeviationBps?: number;
      /**
       * A config file's native currency may have a fixed price without `feed` only with this set: the operator
       * accepts that gas and native deliveries are priced at a number nothing checks.
       */
      allowFixedNative?: boolean;
    };

/** One currency a chain supports (the native one has the zero address). */
export interface CurrencyConfig {
  /** Currency group id, lower case (`eth`, `usdc`, ...): the same asset on several chains shares it. */
  id: string;
  symbol: string;
  name: string;
  address: Address;
  decimals: number;
  supportsBridging: boolean;
  /** EIP-2612 permit. */
  supportsPermit: boolean;
  /** Listed in `featuredTokens`. */
  featured: boolean;
  /** Accepted directly as input (a solver currency). */
  solver: boolean;
  withdrawalFeeBps: number;
  depositFeeBps: number;
  surgeEnabled: boolean;
  logoURI: string;
  verified: boolean;
  price?: PriceSource;
}

/** Addresses of the gateway's contracts on one chain. */
export interface ChainContracts {
  depository: Address;
  receiver: Address;
  /** Router/multicaller that runs user calls; has `cleanupErc20s` / `cleanupNative`. */
  multicaller: Address;
  /** Multicaller only the solver may call; fills go through it. */
  onlyOwnerMulticaller: Address;
  approvalProxy: Address;
  erc20Router: Address;
  multicall3: Address;
  /** Verifier of request attestations, when deployed. */
  attestationVerifier?: Address;
  /**
   * EIP-7702 batch executor that gasless batches (`POST /execute`) delegate the user's EOA to, with the interface
   * and EIP-712 domain of the reference SDK's default executor (`contracts/BatchExecutor.sol`). Absent: gasless
   * execution is refused on this chain.
   */
  batchExecutor?: Address;
  /** Factory of counterfactual deposit addresses (`useDepositAddress`), when deployed. */
  depositAddressFactory?: Address;
  /**
   * Swaps a token the solver does not hold into one it does and deposits the output for a request, in the user's
   * own transaction (`contracts/SwapDepositRouter.sol`). Absent: inputs the solver does not hold are refused.
   */
  swapDepositRouter?: Address;
}

/** A pool of a DEX the gateway may route through: its address, its tokens in the pool's order, its fee. */
export interface DexPool {
  address: Address;
  /** The pool's token0 and token1 (sorted by address, as the pool itself orders them). */
  token0: Address;
  token1: Address;
  /** Swap fee in hundredths of a basis point, Uniswap v3's unit: 500 = 0.05 %; a v2 pair's is always 3000. */
  fee: number;
}

/** Uniswap v3's contracts on one chain (the canonical deployment on a public chain). */
export interface UniswapV3Deployment {
  factory: Address;
  swapRouter: Address;
  /** Default `SwapRouter` (the original, with a deadline in its swap structs); `SwapRouter02` on Base. */
  swapRouterKind?: SwapRouterKind;
  quoterV2: Address;
  /** `NonfungiblePositionManager`: only provides liquidity; the gateway's routing does not need it. */
  positionManager?: Address;
  /** The pools routes may use; absent = none named (sources find pools through `factory`). */
  pools?: DexPool[];
}

/** Uniswap v2's contracts on one chain. */
export interface UniswapV2Deployment {
  factory: Address;
  /** `UniswapV2Router02`. */
  router: Address;
  pools?: DexPool[];
}

/** The DEXes of one chain that swaps may route through; each present one is a swap source (`uniswap-v3`, `uniswap-v2`). */
export interface DexConfig {
  uniswapV3?: UniswapV3Deployment;
  uniswapV2?: UniswapV2Deployment;
}

/** The symbols of the tokens a two-hop DEX route may pass through, when the chain lists them. */
export const DEX_HUB_SYMBOLS: readonly string[] = ['WETH', 'USDC'];

/** A chain as configured (from the config file or the devnet descriptor). */
export interface ChainConfig {
  id: number;
  name: string;
  displayName: string;
  /** The operator's RPC endpoints: used by the gateway, never published (they often carry a provider key). */
  httpRpcUrl: string;
  wsRpcUrl: string;
  /** Further HTTP endpoints, tried in order when `httpRpcUrl` cannot serve a request (`src/chain/clients.ts`). */
  fallbackHttpRpcUrls?: string[];
  /**
   * What `/chains` publishes as `httpRpcUrl` / `wsRpcUrl`: a public endpoint the operator chose for wallets and
   * SDKs, or null to publish none (an empty string; the reference SDK then uses the wallet's own transport).
   */
  publicHttpRpcUrl: string | null;
  publicWsRpcUrl: string | null;
  /**
   * Whether the solver follows this chain's new heads over `wsRpcUrl` (`eth_subscribe`) rather than by polling
   * alone: on the devnet, and for a configured chain whose `wsRpcUrl` is given. Polling stays as the fallback.
   */
  pushHeads?: boolean;
  explorerUrl: string;
  explorerName: string;
  explorerPaths: { transaction: string; address: string; token: string } | null;
  explorerQueryParams: Record<string, string> | null;
  /** Native currency; `address` is the zero address. */
  nativeCurrency: CurrencyConfig;
  /** ERC-20 currencies. */
  currencies: CurrencyConfig[];
  contracts: ChainContracts;
  /** DEX deployments swaps may route through; absent = the solver's inventory is the chain's only swap source. */
  dex?: DexConfig;
  depositEnabled: boolean;
  tokenSupport: 'All' | 'Limited';
  disabled: boolean;
  /** Smallest native units; 0n = not partially disabled. */
  partialDisableLimit: bigint;
  blockProductionLagging: boolean;
  withdrawalFeeBps: number;
  depositFeeBps: number;
  surgeEnabled: boolean;
  iconUrl: string | null;
  logoUrl: string | null;
  brandColor: string | null;
  baseChainId: number | null;
  statusMessage: string | null;
  tags: string[];
  /** Hidden chains appear in the catalogue only when named in `includeChains`. */
  hidden: boolean;
  /** Blocks a deposit waits before it counts. */
  confirmations: number;
  /**
   * Blocks after which a reorg is no longer expected: a deposit the solver used is re-checked until it is this deep
   * (a reorg deeper than `confirmations` that takes it off the chain flags it and books its loss). Default
   * `DEFAULT_FINALITY_DEPTH`, and never less than `confirmations`.
   */
  finalityDepth?: number;
  /**
   * The block the gateway's contracts were deployed at (`npm run deploy` prints it): where a rebuild from chain
   * events starts when the database does not know transactions the solver key made (`src/chain/solverHistory.ts`).
   * Absent: such a database cannot be rebuilt, and the solver does not start.
   */
  deploymentBlock?: number;
  /** Average seconds between blocks (time estimates, cache lifetimes). */
  blockTime: number;
  /** What a transaction pays on this chain besides its gas (see `FeeModel`); absent = `ethereum`. */
  feeModel?: FeeModel;
  /**
   * Most gas a fill that runs the user's calls may be sent with (its estimate plus margin): a call quote or a fill
   * over it is refused. `DEFAULT_MAX_CALLS_GAS` (`src/core/limits/gasCaps.ts`) when absent.
   */
  maxCallsGas?: bigint;
  /** Most gas one gasless batch may use (`originGasOverhead` included); `GATEWAY_GASLESS_MAX_GAS` when absent. */
  maxGaslessGas?: bigint;
}

/**
 * How a chain charges a transaction, for the fill's execution fee:
 * - `ethereum`: gas units times the gas price, nothing else.
 * - `op-stack` (Base, Optimism and the other OP-stack chains): also an L1 data fee in wei, which the
 *   GasPriceOracle predeploy computes from the transaction's bytes (`getL1Fee`) and the receipt reports (`l1Fee`).
 * - `arbitrum`: the L1 component is charged as extra L2 gas, which an Arbitrum node's `eth_estimateGas` already
 *   counts (and the receipt's `gasUsed` includes): priced as `ethereum`.
 */
export type FeeModel = 'ethereum' | 'op-stack' | 'arbitrum';
/** The finality depth of a chain that names none: about two Ethereum epochs (its finality), in blocks. */
export const DEFAULT_FINALITY_DEPTH = 64;

/** A chain's finality depth in blocks: its own, or the default; at least its confirmation depth. */
export const finalityDepthOf = (chain: Pick<ChainConfig, 'confirmations' | 'finalityDepth'>): number =>
  Math.max(chain.finalityDepth ?? DEFAULT_FINALITY_DEPTH, chain.confirmations, 1);

/** Swap fee (DEX-equivalent cost and rebalancing) in basis points of the input, by route class. */
export interface SwapFeeBps {
  bridge: number;
  stablecoin: number;
  major: number;
  minor: number;
}

/** Pricing policy of quotes; every field has a default in `defaultQuoteSettings`. */
export interface QuoteSettings {
  /** Seconds a quote's request stays fillable (a deposit after it is refunded `ORDER_EXPIRED`); `ttl` overrides. */
  ttlSeconds: number;
  /** Seconds after the fill deadline during which a refund may still be claimed (order `refunds[].deadline`). */
  refundWindowSeconds: number;
  swapFeeBps: SwapFeeBps;
  /** Slippage tolerance in bps when the quote names none: same-asset routes and swaps. */
  defaultSlippageBps: { bridge: number; swap: number };
  /** A quote whose fees take more than this share of the input (bps) fails `SWAP_IMPACT_TOO_HIGH` (unless `overridePriceImpact`). */
  maxPriceImpactBps: number;
  /** Same-chain swaps worth less than this (micro-USD) fail `AMOUNT_TOO_LOW`. */
  minSameChainSwapUsdMicros: bigint;
  /** Largest `ttl` a client may choose (seconds); a larger, zero or negative one fails `INVALID_INPUT`. */
  maxTtlSeconds: number;
  /** Exposure limits of quotes and fills (`src/core/limits/exposure.ts`). */
  exposure: ExposureLimits;
  /**
   * Largest swap the solver's inventory sells (micro-USD of its input); a larger one is refused from inventory
   * (`AMOUNT_TOO_HIGH`). `DEFAULT_MAX_INVENTORY_SWAP_USD_MICROS` (USD 250,000) when absent.
   */
  maxInventorySwapUsdMicros?: bigint;
  /** Oldest pool state (seconds since it was read) a DEX quote is priced from; default 30. */
  maxDexStateAgeSeconds?: number;
}

/**
 * How much the solver risks: the largest order per route, and the USD value of its fills per destination chain
 * within a sliding window. USD amounts in micro-USD.
 */
export interface ExposureLimits {
  /** Largest order (USD value of its input when quoted) on a route that no entry of `routes` names. */
  maxOrderUsdMicros: bigint;
  /** Per-route limits: the first entry whose given fields all match the route applies. */
  routes: RouteLimit[];
  /** Length of the outflow window, seconds. */
  outflowWindowSeconds: number;
  /** Most USD the solver's fills may deliver on one chain within the window, unless `chainOutflowUsdMicros` names it. */
  maxOutflowUsdMicros: bigint;
  /** Outflow limits of particular chains, by chain id. */
  chainOutflowUsdMicros: Record<number, bigint>;
  /**
   * Longest a paid request may wait `pending` while the fill gate holds it (a price nobody can check, the outflow
   * limit, a destination out of service), seconds since it was paid: then it is refunded (`TTL_EXPIRED`).
   */
  maxHoldSeconds: number;
}

/** A route's largest order; an omitted field matches anything (currencies by currency id, lower case). */
export interface RouteLimit {
  originChainId?: number;
  destinationChainId?: number;
  originCurrency?: string;
  destinationCurrency?: string;
  maxOrderUsdMicros: bigint;
}

/** Everything the core needs to know about the deployment. */
export interface CoreConfig {
  chains: ChainConfig[];
  /** The solver's EVM address (same on every chain). */
  solverAddress: Address;
  quote: QuoteSettings;
  /** Test only (`GATEWAY_CRASH_AT`): the step at which the process kills itself (`src/core/faults.ts`). */
  crashAt?: CrashPoint | undefined;
  /** App-fee claim minimum and fee per chain; `defaultAppFeeClaimSettings` when absent. */
  appFeeClaims?: AppFeeClaimSettings | undefined;
  /** Blocks a deposit-address reindex rescans (`GATEWAY_DEPOSIT_ADDRESS_REINDEX_BLOCKS`); 1000 when absent. */
  depositAddressReindexBlocks?: number | undefined;
  /** When a transfer to a deposit address is worth sweeping; `defaultSweepSettings` when absent. */
  depositAddressSweep?: SweepSettings | undefined;
  /** Rebalancing targets of the inventory; `defaultInventorySettings` when absent. */
  inventory?: InventorySettings | undefined;
  /** Limits of gasless execution (`POST /execute`); defaults when absent. */
  gasless?: GaslessSettings | undefined;
  /** Limits of permit deposits (`usePermit`, `POST /execute/permits`); `defaultPermitSettings` when absent. */
  permits?: PermitSettings | undefined;
  /** The bar on requesters whose fills with calls or gasless batches revert; `defaultExecutionRevertSettings` when absent. */
  executionReverts?: ExecutionRevertSettings | undefined;
  /**
   * Seconds a deposit for a request this database does not know waits, counted from its block, before the solver
   * checks the chains again and refunds it; `DEFAULT_UNKNOWN_DEPOSIT_GRACE_SECONDS` when absent.
   */
  unknownDepositGraceSeconds?: number | undefined;
}

/**
 * The wait before a deposit for an unknown request is refunded. A second gateway whose database is another one with
 * the same solver key (a misconfiguration the solver's key watch reports) fills its own requests' deposits in
 * seconds; within this wait its fill lands, the chain says the order is filled, and the deposit is kept.
 */
export const DEFAULT_UNKNOWN_DEPOSIT_GRACE_SECONDS = 120;

/** A chain as the catalogue returns it: every Chain field of the spec. */
export interface Chain {
  id: number;
  name: string;
  displayName: string;
  httpRpcUrl: string;
  wsRpcUrl: string;
  explorerUrl: string;
  explorerName: string;
  explorerPaths: { transaction: string; address: string; token: string } | null;
  explorerQueryParams: Record<string, string> | null;
  depositEnabled: boolean;
  tokenSupport: 'All' | 'Limited';
  disabled: boolean;
  partialDisableLimit: bigint;
  blockProductionLagging: boolean;
  currency: { id: string; symbol: string; name: string; address: Address; decimals: number; supportsBridging: boolean };
  withdrawalFee: number;
  depositFee: number;
  surgeEnabled: boolean;
  featuredTokens: Array<{
    id: string;
    symbol: string;
    name: string;
    address: Address;
    decimals: number;
    supportsBridging: boolean;
    metadata: { logoURI: string };
  }>;
  erc20Currencies: Array<{
    id: string;
    symbol: string;
    name: string;
    address: Address;
    decimals: number;
    supportsBridging: boolean;
    supportsPermit: boolean;
    withdrawalFee: number;
    depositFee: number;
    surgeEnabled: boolean;
  }>;
  solverCurrencies: Array<{ id: string; symbol: string; name: string; address: Address; decimals: number }>;
  iconUrl: string | null;
  logoUrl: string | null;
  brandColor: string | null;
  contracts: {
    multicall3: Address;
    multicaller: Address;
    onlyOwnerMulticaller: Address;
    serviceReceiver: Address;
    /** The same as `serviceReceiver`, under the reference's name. */
    relayReceiver: Address;
    erc20Router: Address;
    approvalProxy: Address;
    v3: { erc20Router: Address; approvalProxy: Address };
  };
  vmType: 'evm';
  baseChainId: number | null;
  statusMessage: string | null;
  solverAddresses: Address[];
  tags: string[];
  protocol: { v2: { chainId: string | null; depository: Address | null; depositoryVault: Address | null } };
}

export type { Address, Hex };
