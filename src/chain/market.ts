import {
  BaseError,
  ContractFunctionZeroDataError,
  erc20Abi,
  formatUnits,
  isAddressEqual,
  recoverAddress,
  recoverMessageAddress,
  zeroAddress,
  type Address,
  type PublicClient,
} from 'viem';
import * as contracts from '../../generated/contracts/index.js';
import type { ChainConfig, CurrencyConfig, PriceSource } from '../core/chains/types.js';
import { GatewayError } from '../core/errors.js';
import {
  requirePriceSource,
  type MarketData,
  type TransactionRequest,
  type UsdPrice,
  type WalletReadOptions,
} from '../core/market.js';
import { createTtlCache, type TtlCache } from '../core/cache.js';
import { DEFAULT_PEG_DEVIATION_BPS } from '../core/settings.js';
import type { ChainClients } from './clients.js';
import { describeChain, rpcFailure, transportFailure } from './rpcErrors.js';
import { describeExecutionFailure, describeRevert, isExecutionFailure } from './revertReasons.js';
import { revertDataOf } from '../core/gasless/decodeRevert.js';
import { createWordReads, type WordReads } from './wordReads.js';
import type { HeadFeed } from './heads.js';
import { pow10 } from '../core/powersOfTen.js';

export interface CreateMarketDataParameters {
  chains: ChainConfig[];
  /** The solver's address (the same on every chain), whose balances `solverBalance` caches. */
  solverAddress: Address;
  /** One client per chain, from `createChainClients` (which batches contract reads through Multicall3). */
  clients: ChainClients;
}

/** The fee fields of an EIP-1559 transaction. */
interface FeeCaps {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

interface FeedRound {
  answer: bigint;
  updatedAt: number;
}

/** One chain's client and caches. Cache keys are lower-cased addresses. */
interface ChainMarket {
  config: ChainConfig;
  client: PublicClient;
  /** `decimals()` of each feed: it never changes. */
  feedDecimals: TtlCache<Address, number>;
  /** The USD price of each fed currency (by address), from its feed's answer, for about one block. */
  feedPrices: TtlCache<Address, UsdPrice>;
  /** Unix seconds of the latest block, for about one block. */
  blockTimestamp: TtlCache<'latest', number>;
  gasPrice: TtlCache<'latest', bigint>;
  /** The EIP-1559 fee caps a transaction sent now carries (what the solver's senders read), for about one block. */
  feeCaps: TtlCache<'latest', FeeCaps>;
  solverBalances: TtlCache<Address, bigint>;
  /** Balances and allowances, batched through Multicall3 (`wordReads.ts`). */
  words: WordReads;
  /** The chain's head feed, while the solver runtime runs one (`followHeads`). */
  heads: HeadFeed | undefined;
  /**
   * Users' balance and allowance reads (`sameHead`) of the feed's `version`, by owner, token (and spender), with
   * the time each began.
   */
  sameHead: { version: number | undefined; reads: Map<string, { value: Promise<bigint>; at: number }> };
}

/** The chain-backed market, which also follows the chains' head feeds for the reads made with `sameHead`. */
export interface ChainMarketData extends MarketData {
  /** The head feeds to follow (by chain id), from the solver runtime; undefined when it stops. */
  followHeads(feeds: ReadonlyMap<number, HeadFeed> | undefined): void;
}

/**
 * At most this many user reads are shared per chain and head; beyond it a read is not kept (a burst of distinct
 * users in one block), so the map stays bounded.
 */
const SAME_HEAD_READS_LIMIT = 10_000;

/**
 * The chain-backed `MarketData` (see `src/core/market.ts`): prices from AggregatorV3 feeds or fixed prices,
 * gas prices, balances, allowances and gas estimates. Contract reads are batched through Multicall3: balances
 * (the native one too, via `getEthBalance`) and allowances by `wordReads.ts`, the feeds by the clients' batching.
 * Prices, block timestamps, gas prices and the solver's balances are cached for one block time
 * (`ChainConfig.blockTime`) with a single read in flight per key, and renewed in the background once half a block
 * old, so a busy gateway's quotes do not wait for them.
 * Every failure is a `GatewayError`.
 *
 * @throws Error when a chain has no client (a wiring mistake, found at startup).
 */
export function createMarketData({ chains, solverAddress, clients }: CreateMarketDataParameters): ChainMarketData {
  const markets = new Map<number, ChainMarket>(
    chains.map((config) => {
      const client = clients.get(config.id);
      if (!client) throw new Error(`createMarketData: no client for chain ${config.id}`);
      const oneBlock = config.blockTime * 1_000;
      // Renewed in the background from half a block on, so under traffic no quote waits for these reads.
      const perBlock = { refreshAfterMs: oneBlock / 2 };
      const market: ChainMarket = {
        config,
        client,
        feedDecimals: createTtlCache(Infinity),
        feedPrices: createTtlCache(oneBlock, perBlock),
        blockTimestamp: createTtlCache(oneBlock, perBlock),
        gasPrice: createTtlCache(oneBlock, perBlock),
        feeCaps: createTtlCache(oneBlock, perBlock),
        solverBalances: createTtlCache(oneBlock, perBlock),
        words: createWordReads(client, config.contracts.multicall3),
        heads: undefined,
        sameHead: { version: undefined, reads: new Map() },
      };
      return [config.id, market];
    }),
  );

  const marketOf = (chainId: number): ChainMarket => {
    const market = markets.get(chainId);
    if (!market) throw new GatewayError('UNSUPPORTED_CHAIN', `Chain ${chainId} is not supported`);
    return market;
  };

  return {
    async usdPrice(chainId, currency) {
      const market = marketOf(chainId);
      const source = requirePriceSource(currency, chainId);
      if (source.kind === 'fixed') {
        const fixed = fixedPrice(market, currency, source.usd);
        if (source.feed !== undefined) await checkPeg(market, currency, fixed, source);
        return fixed;
      }
      return market.feedPrices.get(lower(currency.address), () => feedPrice(market, currency, source));
    },

    async gasPrice(chainId) {
      const market = marketOf(chainId);
      return market.gasPrice.get('latest', () => read(market, 'the gas price', () => market.client.getGasPrice()));
    },

    async balanceOf(chainId, owner, token, options?: WalletReadOptions) {
      const market = marketOf(chainId);
      const read = () => readBalance(market, owner, token);
      return options?.sameHead === true ? sameHead(market, `${lower(owner)}:${lower(token)}`, read) : read();
    },

    async solverBalance(chainId, token) {
      const market = marketOf(chainId);
      return market.solverBalances.get(lower(token), () => readBalance(market, solverAddress, token));
    },

    invalidateSolverBalances(chainId) {
      markets.get(chainId)?.solverBalances.clear();
    },

    async allowance(chainId, owner, token, spender, options?: WalletReadOptions) {
      const market = marketOf(chainId);
      const readAllowance = () =>
        read(market, `the ${token} allowance of ${owner} for ${spender}`, async () => {
          const allowance = await market.words.read(token, `${ALLOWANCE}${addressWord(owner)}${addressWord(spender)}`);
          return (
            allowance ??
            market.client.readContract({
              address: token,
              abi: erc20Abi,
              functionName: 'allowance',
              args: [owner, spender],
            })
          );
        });
      return options?.sameHead === true
        ? sameHead(market, `${lower(owner)}:${lower(token)}:${lower(spender)}`, readAllowance)
        : readAllowance();
    },

    followHeads(feeds) {
      for (const market of markets.values()) {
        market.heads = feeds?.get(market.config.id);
        market.sameHead.reads.clear();
        market.sameHead.version = undefined;
      }
    },

    async estimateGas(chainId, tx) {
      return estimate(marketOf(chainId), tx);
    },

    async l1DataFee(chainId, serializedTx) {
      const market = marketOf(chainId);
      // A chain configured `op-stack` without the predeploy fails here, naming both: quotes to it stop rather than
      // leave out a fee the chain would charge.
      return read(
        market,
        `the L1 data fee from the GasPriceOracle ${OP_STACK_GAS_PRICE_ORACLE} (feeModel op-stack)`,
        () =>
          market.client.readContract({
            address: OP_STACK_GAS_PRICE_ORACLE,
            abi: contracts.devnetGasPriceOracleAbi,
            functionName: 'getL1Fee',
            args: [serializedTx],
          }),
      );
    },

    async verifyMessage(chainId, { signer, hash, signature }) {
      const market = marketOf(chainId);
      // An EOA's signature is recovered locally; a contract wallet's is asked of the wallet (EIP-1271, and
      // EIP-6492 for one not deployed yet) by viem's universal verification, an `eth_call`.
      try {
        if (isAddressEqual(await recoverMessageAddress({ message: { raw: hash }, signature }), signer)) return true;
      } catch {
        // Not an ECDSA signature: a contract wallet's, perhaps.
      }
      return read(market, `the signature of ${signer}`, () =>
        market.client.verifyMessage({ address: signer, message: { raw: hash }, signature }),
      );
    },

    async verifyHash(chainId, { signer, hash, signature }) {
      const market = marketOf(chainId);
      try {
        if (isAddressEqual(await recoverAddress({ hash, signature }), signer)) return true;
      } catch {
        // Not an ECDSA signature: a contract wallet's, perhaps.
      }
      return read(market, `the signature of ${signer}`, () =>
        market.client.verifyHash({ address: signer, hash, signature }),
      );
    },
  };
}

/** A fixed USD price such as `'1.00'`, exactly: `{ answer: 100n, decimals: 2 }`. */
function fixedPrice(market: ChainMarket, currency: CurrencyConfig, usd: string): UsdPrice {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(usd);
  const [, whole = '', fraction = ''] = match ?? [];
  const answer = match ? BigInt(whole + fraction) : 0n;
  if (answer <= 0n) {
    const reason = `fixed price '${usd}' is not a positive decimal number`;
    throw new GatewayError('PRICE_FETCH_FAILED', `Cannot price ${label(market, currency)}: ${reason}`);
  }
  return { answer, decimals: fraction.length, updatedAt: Math.floor(Date.now() / 1_000) };
}

/**
 * A fixed price with a feed (a stablecoin): the feed's answer (cached like any feed price, with its staleness
 * check) must lie within `maxDeviationBps` of the fixed price, or the currency is not priced at all: quoting a
 * depegged coin at par would sell the solver's inventory for less than it is worth.
 */
async function checkPeg(
  market: ChainMarket,
  currency: CurrencyConfig,
  fixed: UsdPrice,
  { feed, maxAgeSeconds, maxDeviationBps = DEFAULT_PEG_DEVIATION_BPS }: Extract<PriceSource, { kind: 'fixed' }>,
): Promise<void> {
  const fed = await market.feedPrices.get(lower(currency.address), () =>
    feedPrice(market, currency, {
      kind: 'aggregatorV3',
      feed: feed!,
      ...(maxAgeSeconds === undefined ? {} : { maxAgeSeconds }),
    }),
  );
  // Both prices on the same scale: answer / 10^decimals.
  const scale = Math.max(fixed.decimals, fed.decimals);
  const fixedScaled = fixed.answer * pow10(scale - fixed.decimals);
  const fedScaled = fed.answer * pow10(scale - fed.decimals);
  const distance = fedScaled > fixedScaled ? fedScaled - fixedScaled : fixedScaled - fedScaled;
  if (distance * 10_000n > fixedScaled * BigInt(maxDeviationBps)) {
    throw new GatewayError(
      'PRICE_FETCH_FAILED',
      `Cannot price ${label(market, currency)}: its feed ${feed} answers USD ${formatUnits(fed.answer, fed.decimals)}, more than ${maxDeviationBps} bps from its fixed price USD ${formatUnits(fixed.answer, fixed.decimals)}`,
    );
  }
}

/** A fed currency's price: what `usdPrice` caches per currency for one block (`feedPrices`). */
async function feedPrice(
  market: ChainMarket,
  currency: CurrencyConfig,
  { feed, maxAgeSeconds }: Extract<PriceSource, { kind: 'aggregatorV3' }>,
): Promise<UsdPrice> {
  const { client, config } = market;
  const failure = (reason: string, cause?: unknown) =>
    new GatewayError('PRICE_FETCH_FAILED', `Cannot price ${label(market, currency)}: price feed ${feed} ${reason}`, {
      cause,
    });
  const readFeed = async <T>(load: () => Promise<T>): Promise<T> => {
    try {
      return await load();
    } catch (error) {
      const transport = transportFailure(error, config, `reading the price feed of ${currency.symbol}`);
      throw transport ?? failure(describeCallFailure(error), error);
    }
  };

  const [decimals, round, blockTimestamp] = await Promise.all([
    market.feedDecimals.get(lower(feed), () =>
      readFeed(() => client.readContract({ address: feed, abi: contracts.priceFeedAbi, functionName: 'decimals' })),
    ),
    readFeed(async (): Promise<FeedRound> => {
      const [, answer, , updatedAt] = await client.readContract({
        address: feed,
        abi: contracts.priceFeedAbi,
        functionName: 'latestRoundData',
      });
      return { answer, updatedAt: Number(updatedAt) };
    }),
    maxAgeSeconds === undefined ? undefined : latestBlockTimestamp(market),
  ]);

  if (round.answer <= 0n) throw failure(`answered ${round.answer}, which is not a positive price`);
  const age = blockTimestamp === undefined ? 0 : blockTimestamp - round.updatedAt;
  if (maxAgeSeconds !== undefined && age > maxAgeSeconds) {
    throw failure(
      `answer is stale: updated ${age} s before the latest block, more than maxAgeSeconds ${maxAgeSeconds}`,
    );
  }
  return { answer: round.answer, decimals, updatedAt: round.updatedAt };
}

function latestBlockTimestamp(market: ChainMarket): Promise<number> {
  return market.blockTimestamp.get('latest', () =>
    read(market, 'the latest block', async () =>
      Number((await market.client.getBlock({ blockTag: 'latest' })).timestamp),
    ),
  );
}

/**
 * The OP-stack GasPriceOracle predeploy (the same address on every OP-stack chain). Its `getL1Fee(bytes)` has the
 * signature of the devnet's stand-in (`contracts/DevnetGasPriceOracle.sol`), whose ABI is used for it.
 */
const OP_STACK_GAS_PRICE_ORACLE: Address = '0x420000000000000000000000000000000000000F';

/** Selectors of the word reads: `getEthBalance(address)` (Multicall3), `balanceOf(address)`, `allowance(address,address)`. */
const GET_ETH_BALANCE = '0x4d2301cc';
const BALANCE_OF = '0x70a08231';
const ALLOWANCE = '0xdd62ed3e';
/** An address as an ABI word (hex digits, no `0x`). */
const addressWord = (address: Address): string => address.slice(2).toLowerCase().padStart(64, '0');

/**
 * A user's balance or allowance read with `sameHead`: the read made at the head feed's current version, else a new
 * one, kept for that version. A new head or subscription (the version changes) drops every kept read; a read that
 * fails is dropped too, so the next caller reads again. A kept read also expires one block time after it began, in
 * case a subscription stays open but stops pushing heads. Without a live feed every call reads now.
 */
function sameHead(market: ChainMarket, key: string, read: () => Promise<bigint>): Promise<bigint> {
  const version = market.heads?.version();
  const shared = market.sameHead;
  if (version !== shared.version) {
    shared.reads.clear();
    shared.version = version;
  }
  if (version === undefined) return read();
  const now = Date.now();
  const kept = shared.reads.get(key);
  if (kept !== undefined && now - kept.at < market.config.blockTime * 1_000) return kept.value;
  const value = read();
  if (kept !== undefined || shared.reads.size < SAME_HEAD_READS_LIMIT) {
    const entry = { value, at: now };
    shared.reads.set(key, entry);
    value.catch(() => {
      if (shared.reads.get(key) === entry) shared.reads.delete(key);
    });
  }
  return value;
}

/**
 * Native balances are read through Multicall3's `getEthBalance`, so they batch with ERC-20 reads. A read the
 * fast path could not decode is read again through viem, which reports why it failed.
 */
function readBalance(market: ChainMarket, owner: Address, token: Address): Promise<bigint> {
  const { client, config, words } = market;
  return lower(token) === zeroAddress
    ? read(market, `the native balance of ${owner}`, async () => {
        const balance = await words.read(config.contracts.multicall3, `${GET_ETH_BALANCE}${addressWord(owner)}`);
        return (
          balance ??
          client.readContract({
            address: config.contracts.multicall3,
            abi: contracts.multicall3Abi,
            functionName: 'getEthBalance',
            args: [owner],
          })
        );
      })
    : read(market, `the ${token} balance of ${owner}`, async () => {
        const balance = await words.read(token, `${BALANCE_OF}${addressWord(owner)}`);
        return (
          balance ?? client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })
        );
      });
}

/**
 * Estimates (and so simulates) `tx` as it will be sent: from its sender, with the fee caps the solver's senders put
 * on a transaction sent now (`estimateFeesPerGas`, as `src/chain/sender/feeCaps.ts` reads them). Without them the
 * node runs the transaction at a gas price of 0, and a contract that reads `tx.gasprice` (or `basefee` against it)
 * passes the simulation and reverts once sent, at the solver's cost.
 */
async function estimate(market: ChainMarket, tx: TransactionRequest): Promise<bigint> {
  const { client, config } = market;
  const fees = await market.feeCaps.get('latest', () =>
    read(market, 'the fee caps', async () => {
      const caps = await client.estimateFeesPerGas();
      return { maxFeePerGas: caps.maxFeePerGas, maxPriorityFeePerGas: caps.maxPriorityFeePerGas };
    }),
  );
  try {
    return await client.estimateGas({
      account: tx.from,
      to: tx.to,
      data: tx.data,
      value: tx.value,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      ...(tx.authorizationList === undefined ? {} : { authorizationList: tx.authorizationList }),
    });
  } catch (error) {
    const transport = transportFailure(error, config, 'estimating gas');
    if (transport) throw transport;
    // Anything else the node answered (rate limits, unknown methods, ...) is the RPC's failure, not the transaction's.
    if (!(error instanceof BaseError) || (revertDataOf(error) === undefined && !error.walk(isExecutionFailure))) {
      throw rpcFailure(error, config, 'estimating gas');
    }
    const reason = describeExecutionFailure(error);
    throw new GatewayError(
      'DESTINATION_TX_FAILED',
      `Transaction to ${tx.to} on ${describeChain(config)} would fail: ${reason}`,
      {
        data: reason,
        cause: error,
      },
    );
  }
}

/** Runs a chain read; any failure becomes `REQUEST_TIMED_OUT` or `RPC_HTTP_ERROR` naming the chain and `what`. */
async function read<T>(market: ChainMarket, what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw (
      transportFailure(error, market.config, `reading ${what}`) ?? rpcFailure(error, market.config, `reading ${what}`)
    );
  }
}

/** Why a contract read failed, for a message. */
function describeCallFailure(error: unknown): string {
  if (!(error instanceof BaseError)) return String(error);
  if (error.walk((e) => e instanceof ContractFunctionZeroDataError))
    return 'returned no data (no contract at that address?)';
  const data = revertDataOf(error);
  return data === undefined ? error.shortMessage : `reverted with ${describeRevert(data)}`;
}

const lower = (address: Address): Address => address.toLowerCase() as Address;
const label = (market: ChainMarket, currency: CurrencyConfig): string =>
  `${currency.symbol} on ${describeChain(market.config)}`;
