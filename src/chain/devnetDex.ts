import {
  encodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  encodePacked,
  getContractAddress,
  keccak256,
  maxUint256,
  type Address,
  type Hex,
} from 'viem';
import { stableTokenAbi } from '../../generated/contracts/index.js';
import type { DexPool } from '../core/chains/types.js';
import type { DevnetDex } from './devnetDescriptor.js';
import {
  UNISWAP_V2_PAIR_INIT_CODE_HASH,
  UNISWAP_V3_POOL_INIT_CODE_HASH,
  uniswapArtifacts,
  type UniswapArtifact,
  uniswapV2RouterAbi,
  uniswapV3FactoryAbi,
  uniswapV3PositionManagerAbi,
} from './uniswapArtifacts.js';

/**
 * The devnet's DEX liquidity: Uniswap v3 and v2 deployed from their npm artifacts (`uniswapArtifacts.ts`) with the
 * devnet's WETH as WETH9, and pools seeded at the devnet's oracle prices, so swaps can be priced from pool state and
 * routed through pools as on a real chain. Everything is sent through the deployer's nonce-ordered batch: the
 * addresses of contracts, pools and pairs follow from nonces and CREATE2 salts, so later calls use them before
 * anything is mined, and they are the same on every devnet chain.
 */

/** What the devnet setup sends the DEX transactions through (the deployer's `TransactionBatch`). */
export interface DevnetSender {
  /** Sends a contract creation and returns the address it will have. */
  deploy(data: Hex): Promise<Address>;
  /** Sends a call with a fixed gas limit (its target may not be mined yet, so it cannot be estimated). */
  call(to: Address, data: Hex, value?: bigint, gas?: bigint): Promise<void>;
}

/** A devnet token a pool holds. */
export interface DexToken {
  address: Address;
  decimals: number;
}

/** The devnet tokens pools are seeded with, by currency id. */
export type DexTokens = Record<'weth' | 'usdc' | 'usdt' | 'mnr' | 'long', DexToken>;

/**
 * One seeded position. `width`: the range as ± basis points of price around the pool's price (rounded outwards to
 * the tick spacing), or `full` for the whole tick range. `amount`: whole tokens of the pool's first token (`a`) put
 * in, with the same value of the second one; the position manager takes what the range needs of each.
 */
interface PositionSpec {
  width: number | 'full';
  amount: bigint;
}

/**
 * A seeded pool. `price`: amounts of `a` and `b` of equal value in whole tokens (`[1n, 1000n]`: 1 `a` = 1000 `b`);
 * `oracle`: priced at the devnet's feeds instead. v3 pools keep several positions of different widths, so large
 * swaps cross initialized ticks; `v2` pairs are one reserve.
 */
interface PoolSpec {
  protocol: 'uniswap-v3' | 'uniswap-v2';
  a: keyof DexTokens;
  b: keyof DexTokens;
  /** Hundredths of a bip (Uniswap v3's unit); a v2 pair's is 3000. */
  fee: number;
  price: 'oracle' | [bigint, bigint];
  positions: PositionSpec[];
}

/** LONG is priced by its pools alone: 1 WETH = 1000 LONG in the v3 pool and 1005 in the v2 pair. */
export const DEVNET_LONG_PER_WETH = { v3: 1000n, v2: 1005n } as const;

const POOL_SPECS: readonly PoolSpec[] = [
  {
    // Deep: a 500 ETH swap moves it well under 1 %; the narrow ranges make sizeable swaps cross ticks.
    protocol: 'uniswap-v3',
    a: 'weth',
    b: 'usdc',
    fee: 500,
    price: 'oracle',
    positions: [
      { width: 'full', amount: 2_000n },
      { width: 2_000, amount: 2_000n },
      { width: 500, amount: 1_000n },
      { width: 100, amount: 500n },
      { width: 30, amount: 200n },
    ],
  },
  {
    protocol: 'uniswap-v3',
    a: 'usdc',
    b: 'usdt',
    fee: 100,
    price: 'oracle',
    positions: [
      { width: 'full', amount: 1_000_000n },
      { width: 100, amount: 5_000_000n },
      { width: 10, amount: 5_000_000n },
      { width: 2, amount: 1_000_000n },
    ],
  },
  {
    // Shallow: a 500 ETH swap takes a double-digit share of the pool's MNR.
    protocol: 'uniswap-v3',
    a: 'weth',
    b: 'mnr',
    fee: 3_000,
    price: 'oracle',
    positions: [
      { width: 'full', amount: 1_000n },
      { width: 1_000, amount: 100n },
      { width: 200, amount: 20n },
    ],
  },
  {
    protocol: 'uniswap-v3',
    a: 'weth',
    b: 'long',
    fee: 10_000,
    price: [1n, DEVNET_LONG_PER_WETH.v3],
    positions: [
      { width: 'full', amount: 200n },
      { width: 1_000, amount: 50n },
    ],
  },
  {
    protocol: 'uniswap-v2',
    a: 'weth',
    b: 'long',
    fee: 3_000,
    price: [1n, DEVNET_LONG_PER_WETH.v2],
    positions: [{ width: 'full', amount: 100n }],
  },
];

/** Tick spacing of each v3 fee tier the factory enables at deployment. */
const TICK_SPACING: Record<number, number> = { 100: 1, 500: 10, 3_000: 60, 10_000: 200 };
const MAX_TICK = 887_272;

// Gas limits of the calls that cannot be estimated before their targets are mined, about 1.2× what they use.
const CREATE_POOL_GAS = 5_600_000n;
const MINT_POSITION_GAS = 800_000n;
const CREATE_PAIR_GAS = 3_200_000n;

export interface DeployDexParameters {
  sender: DevnetSender;
  /** The deployer: owner of the factories, holder of every position, minter of the tokens it seeds. */
  owner: Address;
  tokens: DexTokens;
  /** USD answers (any one decimals, the same for all) of the tokens priced by feeds. */
  usd: Record<'weth' | 'usdc' | 'usdt' | 'mnr', bigint>;
}

/** Raw amounts of WETH the positions take at most: the deployer must hold them (wrapped) before seeding. */
export function devnetDexWethNeeded(tokens: DexTokens, usd: DeployDexParameters['usd']): bigint {
  return POOL_SPECS.reduce((sum, spec) => sum + (seedAmounts(spec, tokens, usd).get('weth') ?? 0n), 0n);
}

/**
 * Deploys Uniswap v3 (factory, `SwapRouter`, `QuoterV2`, `NonfungiblePositionManager`) and v2 (factory,
 * `UniswapV2Router02`) and seeds the pools of `POOL_SPECS`. The position manager is given the zero address as
 * its token descriptor: it is only read by `tokenURI`, which the devnet never calls. The deployer must already
 * hold the WETH `devnetDexWethNeeded` names; the other tokens it mints itself (it owns them).
 */
export async function deployDex({ sender, owner, tokens, usd }: DeployDexParameters): Promise<DevnetDex> {
  const artifacts = uniswapArtifacts();
  const weth = tokens.weth.address;
  const deploy = ({ abi, bytecode }: UniswapArtifact, args: readonly unknown[] = []): Promise<Address> =>
    sender.deploy(encodeDeployData({ abi, bytecode, args }));

  const [v3Factory, v2Factory] = await Promise.all([deploy(artifacts.v3Factory), deploy(artifacts.v2Factory, [owner])]);
  const [swapRouter, quoterV2, positionManager, v2Router] = await Promise.all([
    deploy(artifacts.swapRouter, [v3Factory, weth]),
    deploy(artifacts.quoterV2, [v3Factory, weth]),
    deploy(artifacts.positionManager, [v3Factory, weth, '0x0000000000000000000000000000000000000000']),
    deploy(artifacts.v2Router02, [v2Factory, weth]),
  ]);

  // The 0.01 % tier came after the v3-core release (governance enabled it on mainnet, as here the factory's owner).
  await sender.call(
    v3Factory,
    encodeFunctionData({ abi: uniswapV3FactoryAbi, functionName: 'enableFeeAmount', args: [100, 1] }),
  );

  // The deployer mints what the positions take (WETH it already holds), and lets both position takers pull it.
  const needed = new Map<keyof DexTokens, bigint>();
  for (const spec of POOL_SPECS) {
    for (const [id, amount] of seedAmounts(spec, tokens, usd)) needed.set(id, (needed.get(id) ?? 0n) + amount);
  }
  const setup: Promise<void>[] = [];
  for (const [id, amount] of needed) {
    const token = tokens[id].address;
    if (id !== 'weth') {
      setup.push(
        sender.call(token, encodeFunctionData({ abi: stableTokenAbi, functionName: 'mint', args: [owner, amount] })),
      );
    }
    for (const spender of [positionManager, v2Router]) {
      setup.push(
        sender.call(
          token,
          encodeFunctionData({ abi: stableTokenAbi, functionName: 'approve', args: [spender, maxUint256] }),
        ),
      );
    }
  }
  await Promise.all(setup);

  const v3Pools: DexPool[] = [];
  const v2Pools: DexPool[] = [];
  const seeding: Promise<void>[] = [];
  for (const spec of POOL_SPECS) {
    const a = tokens[spec.a];
    const b = tokens[spec.b];
    const [valueA, valueB] = equalValueAmounts(spec, tokens, usd);
    const aIsToken0 = BigInt(a.address) < BigInt(b.address);
    const [token0, token1] = aIsToken0 ? [a, b] : [b, a];
    if (spec.protocol === 'uniswap-v2') {
      v2Pools.push({
        address: v2PairAddress(v2Factory, token0.address, token1.address),
        token0: token0.address,
        token1: token1.address,
        fee: spec.fee,
      });
      for (const position of spec.positions) {
        const [amountA, amountB] = positionAmounts(position, a, valueA, valueB);
        const data = encodeFunctionData({
          abi: uniswapV2RouterAbi,
          functionName: 'addLiquidity',
          args: [a.address, b.address, amountA, amountB, amountA, amountB, owner, maxUint256],
        });
        seeding.push(sender.call(v2Router, data, 0n, CREATE_PAIR_GAS));
      }
      continue;
    }
    const [value0, value1] = aIsToken0 ? [valueA, valueB] : [valueB, valueA];
    const sqrtPriceX96 = sqrtPriceX96Of(value0, value1);
    v3Pools.push({
      address: v3PoolAddress(v3Factory, token0.address, token1.address, spec.fee),
      token0: token0.address,
      token1: token1.address,
      fee: spec.fee,
    });
    seeding.push(
      sender.call(
        positionManager,
        encodeFunctionData({
          abi: uniswapV3PositionManagerAbi,
          functionName: 'createAndInitializePoolIfNecessary',
          args: [token0.address, token1.address, spec.fee, sqrtPriceX96],
        }),
        0n,
        CREATE_POOL_GAS,
      ),
    );
    const spacing = TICK_SPACING[spec.fee]!;
    const tick = approximateTick(value0, value1);
    for (const position of spec.positions) {
      const [tickLower, tickUpper] = tickRange(tick, position.width, spacing);
      const [amountA, amountB] = positionAmounts(position, a, valueA, valueB);
      const data = encodeFunctionData({
        abi: uniswapV3PositionManagerAbi,
        functionName: 'mint',
        args: [
          {
            token0: token0.address,
            token1: token1.address,
            fee: spec.fee,
            tickLower,
            tickUpper,
            amount0Desired: aIsToken0 ? amountA : amountB,
            amount1Desired: aIsToken0 ? amountB : amountA,
            amount0Min: 0n,
            amount1Min: 0n,
            recipient: owner,
            deadline: maxUint256,
          },
        ],
      });
      seeding.push(sender.call(positionManager, data, 0n, MINT_POSITION_GAS));
    }
  }
  await Promise.all(seeding);

  return {
    uniswapV3: { factory: v3Factory, swapRouter, quoterV2, positionManager, pools: v3Pools },
    uniswapV2: { factory: v2Factory, router: v2Router, pools: v2Pools },
  };
}

/**
 * Raw amounts of `a` and `b` worth the same, per whole token of `a`: at the feeds' USD answers
 * (`10^decA × usdB` of `a` is worth `10^decB × usdA` of `b`, both `usdA × usdB`), or at the spec's fixed price.
 */
function equalValueAmounts(spec: PoolSpec, tokens: DexTokens, usd: DeployDexParameters['usd']): [bigint, bigint] {
  const a = tokens[spec.a];
  const b = tokens[spec.b];
  if (spec.price !== 'oracle') {
    const [wholeA, wholeB] = spec.price;
    return [wholeA * 10n ** BigInt(a.decimals), wholeB * 10n ** BigInt(b.decimals)];
  }
  const usdA = usd[spec.a as keyof typeof usd];
  const usdB = usd[spec.b as keyof typeof usd];
  return [10n ** BigInt(a.decimals) * usdB, 10n ** BigInt(b.decimals) * usdA];
}

/** What a position is given: `amount` whole tokens of `a`, and the same value of `b` (rounded down). */
function positionAmounts(position: PositionSpec, a: DexToken, valueA: bigint, valueB: bigint): [bigint, bigint] {
  const amountA = position.amount * 10n ** BigInt(a.decimals);
  return [amountA, (amountA * valueB) / valueA];
}

/** What one pool's positions take of each token, at most. */
function seedAmounts(spec: PoolSpec, tokens: DexTokens, usd: DeployDexParameters['usd']): Map<keyof DexTokens, bigint> {
  const [valueA, valueB] = equalValueAmounts(spec, tokens, usd);
  const amounts = new Map<keyof DexTokens, bigint>();
  for (const position of spec.positions) {
    const [amountA, amountB] = positionAmounts(position, tokens[spec.a], valueA, valueB);
    amounts.set(spec.a, (amounts.get(spec.a) ?? 0n) + amountA);
    amounts.set(spec.b, (amounts.get(spec.b) ?? 0n) + amountB);
  }
  return amounts;
}

/**
 * A pool's `sqrtPriceX96` for a price of `amount1` raw units of token1 per `amount0` raw units of token0, exactly:
 * `floor(sqrt(amount1 × 2^192 / amount0))` (the integer square root of the floor is the floor of the square root).
 */
export function sqrtPriceX96Of(amount0: bigint, amount1: bigint): bigint {
  if (amount0 <= 0n || amount1 <= 0n) throw new RangeError('a pool price needs positive amounts');
  return sqrt((amount1 << 192n) / amount0);
}

/** The integer square root, `floor(sqrt(value))`, by Newton's method on bigints. */
export function sqrt(value: bigint): bigint {
  if (value < 0n) throw new RangeError('square root of a negative number');
  if (value < 2n) return value;
  let x = 1n << BigInt(Math.ceil(value.toString(2).length / 2));
  for (;;) {
    const y = (x + value / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/**
 * The pool's tick near its price, in floating point: it only centres the seeded ranges, whose bounds are rounded
 * outwards to the tick spacing anyway; the pool's price itself is the exact `sqrtPriceX96Of`.
 */
function approximateTick(amount0: bigint, amount1: bigint): number {
  return Math.floor(Math.log(Number(amount1) / Number(amount0)) / Math.log(1.0001));
}

function tickRange(tick: number, width: number | 'full', spacing: number): [number, number] {
  const full = Math.floor(MAX_TICK / spacing) * spacing;
  if (width === 'full') return [-full, full];
  const offset = Math.ceil(Math.log(1 + width / 10_000) / Math.log(1.0001));
  const lower = Math.floor((tick - offset) / spacing) * spacing;
  const upper = Math.ceil((tick + offset) / spacing) * spacing;
  return [Math.max(lower, -full), Math.min(upper, full)];
}

/** The address the v3 factory deploys a pool at (`PoolAddress.computeAddress`). */
export function v3PoolAddress(factory: Address, token0: Address, token1: Address, fee: number): Address {
  return getContractAddress({
    opcode: 'CREATE2',
    from: factory,
    salt: keccak256(
      encodeAbiParameters([{ type: 'address' }, { type: 'address' }, { type: 'uint24' }], [token0, token1, fee]),
    ),
    bytecodeHash: UNISWAP_V3_POOL_INIT_CODE_HASH,
  });
}

/** The address the v2 factory deploys a pair at (`UniswapV2Library.pairFor`). */
export function v2PairAddress(factory: Address, token0: Address, token1: Address): Address {
  return getContractAddress({
    opcode: 'CREATE2',
    from: factory,
    salt: keccak256(encodePacked(['address', 'address'], [token0, token1])),
    bytecodeHash: UNISWAP_V2_PAIR_INIT_CODE_HASH,
  });
}
