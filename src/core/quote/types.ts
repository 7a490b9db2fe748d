import type { Address, Hex } from 'viem';
import type { TradeType } from '../../records/request.js';
import type { RouteClass, RouteOperation } from '../vocabulary/route.js';
import type { Amount, ExpandedPriceImpact } from '../vocabulary/amount.js';

export type { TradeType };

/** What a client asks (`POST /quote/v2`, `POST /price`, GraphQL `quote` / `price`), amounts already bigint. */
export interface QuoteParameters {
  user: string;
  recipient?: string | undefined;
  originChainId: number;
  destinationChainId: number;
  /** A currency address, or a symbol / currency id such as `usdc` (the reference accepts symbol-like strings). */
  originCurrency: string;
  destinationCurrency: string;
  amount: bigint;
  tradeType: TradeType;
  txs?: ReadonlyArray<{ to?: string | undefined; value?: bigint | undefined; data?: string | undefined }> | undefined;
  txsGasLimit?: number | undefined;
  refundTo?: string | undefined;
  referrer?: string | undefined;
  referrerAddress?: string | undefined;
  /** Basis points as given (a string on REST); validated by the engine. */
  slippageTolerance?: string | undefined;
  latePaymentSlippageTolerance?: string | undefined;
  appFees?: ReadonlyArray<{ recipient?: string | undefined; fee?: string | undefined }> | undefined;
  subsidizeFees?: boolean | undefined;
  sponsoredFeeComponents?: ReadonlyArray<string> | undefined;
  /** USD micro-units. */
  maxSubsidizationAmount?: bigint | undefined;
  explicitDeposit?: boolean | undefined;
  /**
   * Deposit by signature: the user signs an EIP-3009 authorization (or EIP-2612 permit) and the gateway
   * submits the deposit, paying its gas (priced into the execution fee). ERC-20 inputs that support it only.
   */
  usePermit?: boolean | undefined;
  /** Validity of the permit in seconds (default 600, at most the quote's own validity). */
  permitExpiry?: number | undefined;
  useExternalLiquidity?: boolean | undefined;
  includeProtocolData?: boolean | undefined;
  ttl?: number | undefined;
  overridePriceImpact?: boolean | undefined;
  includedSwapSources?: ReadonlyArray<string> | undefined;
  excludedSwapSources?: ReadonlyArray<string> | undefined;
  includedOriginSwapSources?: ReadonlyArray<string> | undefined;
  includedDestinationSwapSources?: ReadonlyArray<string> | undefined;
  /** A same-chain swap through the solver (a deposit) rather than the user's own DEX swap (REST only). */
  forceSolverExecution?: boolean | undefined;
  /** Pay by a plain transfer to a deposit address (`docs/deposit-addresses.md`). */
  useDepositAddress?: boolean | undefined;
  /** A strict (order-bound, single-use) deposit address; needs `refundTo`. */
  strict?: boolean | undefined;
  /** Origin-chain address that may withdraw what is still at the deposit address; needs `useDepositAddress`. */
  recoveryAddress?: string | undefined;
  /**
   * Deliver native gas worth `topupGasAmount` (micro-USD, default USD 2) to the recipient with the fill, where
   * the destination is eligible (`docs/api-notes.md`); ignored elsewhere, as the reference does.
   */
  topupGas?: boolean | undefined;
  /** Micro-USD as a decimal string; requires `topupGas`. */
  topupGasAmount?: string | undefined;
  /**
   * Options of the reference this gateway cannot honour; any that is set (true, or a non-empty value) is
   * refused with a clear `INVALID_INPUT` naming it, rather than silently quoting something else.
   */
  unsupported?: Partial<Record<UnsupportedQuoteOption, unknown>> | undefined;
}

export const unsupportedQuoteOptions = ['fixedRate', 'authorizationList', 'gasLimitForDepositSpecifiedTxs'] as const;
export type UnsupportedQuoteOption = (typeof unsupportedQuoteOptions)[number];

export interface TransactionItem {
  status: 'incomplete';
  data: { from: Address; to: Address; data: Hex; value: bigint; chainId: number };
  check?: { endpoint: string; method: 'GET' };
}

export interface SignatureItem {
  status: 'incomplete';
  data: {
    sign: {
      signatureKind: 'eip712';
      domain: { name: string; version: string; chainId: number; verifyingContract: Address };
      types: Record<string, ReadonlyArray<{ name: string; type: string }>>;
      primaryType: string;
      /** The EIP-712 message; uint256 values as bigint (decimal strings on the wire). */
      value: Record<string, bigint | string>;
    };
    post: { endpoint: '/execute/permits'; method: 'POST'; body: { kind: string; requestId: Hex; api: string } };
  };
  check: { endpoint: string; method: 'GET' };
}

export type QuoteStep =
  | {
      id: 'approve' | 'deposit' | 'swap';
      action: string;
      description: string;
      kind: 'transaction';
      requestId: Hex;
      depositAddress: string;
      items: TransactionItem[];
    }
  | {
      id: 'authorize1';
      action: string;
      description: string;
      kind: 'signature';
      requestId: Hex;
      depositAddress: string;
      items: SignatureItem[];
    };

export interface Impact {
  usd: string;
  percent: string;
}

export interface SlippageLeg {
  usd: string;
  value: string;
  percent: string;
}

export interface QuoteDetails {
  operation: RouteOperation | 'send';
  sender: Address;
  recipient: Address;
  currencyIn: Amount;
  currencyOut: Amount;
  refundCurrency: Amount;
  /** Native gas the fill sends the recipient besides the output (`topupGas`, when eligible). */
  currencyGasTopup?: Amount;
  totalImpact: Impact;
  swapImpact: Impact;
  expandedPriceImpact: ExpandedPriceImpact;
  rate: string;
  slippageTolerance: { total: number; origin: SlippageLeg; destination: SlippageLeg };
  /** Seconds. */
  timeEstimate: number;
  userBalance: bigint;
  isFixedRate: boolean;
  route: {
    origin: { inputCurrency: Amount; outputCurrency: Amount; router: string; includedSwapSources: string[] };
    destination: { inputCurrency: Amount; outputCurrency: Amount; router: string; includedSwapSources: string[] };
  };
}

/** The deprecated `fees` object: gateway-related fees only. */
export interface LegacyFees {
  gas: Amount;
  relayer: Amount;
  relayerGas: Amount;
  relayerService: Amount;
  app: Amount;
  subsidized: Amount;
}

export type SponsorshipComponentName = 'execution' | 'swap' | 'service' | 'app' | 'rent';

/** `relay` is the platform fee under the reference's name, sent beside `service` for the reference's clients. */
export type WireSponsorshipComponentName = SponsorshipComponentName | 'relay';

export interface FeeSponsorshipPhase {
  selectedComponents: WireSponsorshipComponentName[];
  maxSubsidizationAmount?: string;
  capHit: boolean;
  components: Record<
    SponsorshipComponentName,
    { selected: boolean; total: Amount; sponsored: Amount; userPays: Amount }
  > & {
    relay?: { selected: boolean; total: Amount; sponsored: Amount; userPays: Amount };
  };
  sponsoredTotal: Amount;
  userPaysTotal: Amount;
}

export interface ProtocolOrder {
  orderId: Hex;
  hubType: 'onchain';
  orderData: {
    version: string;
    solverChainId: string;
    solver: Address;
    salt: Hex;
    inputs: Array<{
      payment: { chainId: string; currency: Address; amount: bigint; weight: bigint };
      refunds: Array<{
        chainId: string;
        recipient: Address;
        currency: Address;
        minimumAmount: bigint;
        deadline: number;
        extraData: Hex;
      }>;
    }>;
    output: {
      chainId: string;
      payments: Array<{ recipient: Address; currency: Address; minimumAmount: bigint; expectedAmount: bigint }>;
      calls: Hex[];
      deadline: number;
      extraData: Hex;
    };
    fees: Array<{ recipient: Address; chainId: string; currency: Address; amount: bigint }>;
  };
  orderSignature?: Hex;
  paymentDetails: { chainId: string; depository: Address; currency: Address; amount: bigint };
}

export interface Quote {
  requestId: Hex;
  steps: QuoteStep[];
  fees: LegacyFees;
  feeSponsorship?: { quoted: FeeSponsorshipPhase };
  details: QuoteDetails;
  protocol: { v2: ProtocolOrder };
}

/** A price: the quote without steps, order or stored request. */
export interface Price {
  fees: LegacyFees;
  details: QuoteDetails;
}

/**
 * Fees of a request by component in the input currency's smallest units (`data.fees.quoted` of requests v3),
 * stored with the request as JSON (amounts as decimal strings).
 */
export interface FeeBreakdown {
  currency: { chainId: number; address: Address; decimals: number; symbol: string };
  routeClass: RouteClass;
  execution: bigint;
  executionUsdMicros: bigint;
  /** Parts of the execution fee in micro-USD. */
  executionParts: {
    flatMicros: bigint;
    destinationGasMicros: bigint;
    /** The origin transaction the gateway sends for the user (permit deposits); 0 otherwise. */
    originGasMicros: bigint;
    /** The native gas top-up's value (`topupGas`), charged with the fill's gas; 0 without one. */
    gasTopupMicros: bigint;
    gasUnits: bigint;
    gasPriceWei: bigint;
    /** The fill's L1 data fee (wei) on an OP-stack destination, in `destinationGasMicros`; 0 elsewhere. */
    l1FeeWei: bigint;
    /** The origin transaction's L1 data fee (wei) on an OP-stack origin, in `originGasMicros`; absent elsewhere. */
    originL1FeeWei?: bigint;
  };
  swap: bigint;
  swapBps: number;
  platform: bigint;
  platformBps: number;
  app: bigint;
  appFees: Array<{ recipient: Address; feeBps: number; amount: bigint }>;
  sponsored: bigint;
  sponsoredComponents: string[];
  userPays: bigint;
  revenueShare: { tier: string | null; shareBps: number; amount: bigint };
}
