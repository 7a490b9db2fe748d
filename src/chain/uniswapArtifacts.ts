import { createRequire } from 'node:module';
import { parseAbi, type Abi, type Hex } from 'viem';

/**
 * Uniswap's contracts as published in their npm packages (`@uniswap/v3-core` 1.0.1, `@uniswap/v3-periphery` 1.4.4,
 * `@uniswap/v2-core` 1.0.1, `@uniswap/v2-periphery` 1.1.0-beta.0): the creation bytecode is read from the packages'
 * compiled artifacts and deployed as it is, never recompiled, so the devnet runs the code mainnet runs. Both
 * periphery packages hardcode the init-code hash of the pools they route through (v3 `POOL_INIT_CODE_HASH`, v2
 * `pairFor`); the core artifacts hash to the same values (`test/chain/devnetDex.test.ts` checks it).
 */
export interface UniswapArtifact {
  abi: Abi;
  bytecode: Hex;
}

const require = createRequire(import.meta.url);

/** Hardhat artifacts (v3) carry `bytecode`; waffle artifacts (v2) carry `bytecode` without the 0x prefix. */
function artifact(path: string): UniswapArtifact {
  const json = require(path) as { abi: Abi; bytecode: string };
  const bytecode = json.bytecode.startsWith('0x') ? json.bytecode : `0x${json.bytecode}`;
  return { abi: json.abi, bytecode: bytecode as Hex };
}

let loaded: ReturnType<typeof load> | undefined;

function load() {
  return {
    v3Factory: artifact('@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json'),
    v3Pool: artifact('@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json'),
    swapRouter: artifact('@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json'),
    quoterV2: artifact('@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json'),
    positionManager: artifact(
      '@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json',
    ),
    v2Factory: artifact('@uniswap/v2-core/build/UniswapV2Factory.json'),
    v2Pair: artifact('@uniswap/v2-core/build/UniswapV2Pair.json'),
    v2Router02: artifact('@uniswap/v2-periphery/build/UniswapV2Router02.json'),
  };
}

/** The artifacts, read once on first use (about 300 kB of JSON a gateway on real networks never needs). */
export function uniswapArtifacts(): ReturnType<typeof load> {
  return (loaded ??= load());
}

/** The Uniswap v3 pool init-code hash the v3 periphery computes pool addresses with (`PoolAddress.sol`). */
export const UNISWAP_V3_POOL_INIT_CODE_HASH: Hex = '0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54';
/** The Uniswap v2 pair init-code hash `UniswapV2Library.pairFor` of Router02 hardcodes. */
export const UNISWAP_V2_PAIR_INIT_CODE_HASH: Hex = '0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f';

/** Typed fragments of the Uniswap functions the gateway and the devnet call (the artifacts' ABIs are untyped JSON). */
export const uniswapV3FactoryAbi = parseAbi([
  'function getPool(address tokenA, address tokenB, uint24 fee) view returns (address pool)',
  'function feeAmountTickSpacing(uint24 fee) view returns (int24)',
  'function enableFeeAmount(uint24 fee, int24 tickSpacing)',
]);

export const uniswapV3PoolAbi = parseAbi([
  'function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex, uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked)',
  'function liquidity() view returns (uint128)',
  'function token0() view returns (address)',
  'function token1() view returns (address)',
  'function fee() view returns (uint24)',
  'function tickSpacing() view returns (int24)',
  'function ticks(int24 tick) view returns (uint128 liquidityGross, int128 liquidityNet, uint256 feeGrowthOutside0X128, uint256 feeGrowthOutside1X128, int56 tickCumulativeOutside, uint160 secondsPerLiquidityOutsideX128, uint32 secondsOutside, bool initialized)',
  'function tickBitmap(int16 wordPosition) view returns (uint256)',
]);

export const uniswapV3PositionManagerAbi = parseAbi([
  'function createAndInitializePoolIfNecessary(address token0, address token1, uint24 fee, uint160 sqrtPriceX96) payable returns (address pool)',
  'struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper; uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; address recipient; uint256 deadline; }',
  'function mint(MintParams params) payable returns (uint256 tokenId, uint128 liquidity, uint256 amount0, uint256 amount1)',
]);

export const uniswapV3QuoterV2Abi = parseAbi([
  'struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }',
  'function quoteExactInputSingle(QuoteExactInputSingleParams params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
  'function quoteExactInput(bytes path, uint256 amountIn) returns (uint256 amountOut, uint160[] sqrtPriceX96AfterList, uint32[] initializedTicksCrossedList, uint256 gasEstimate)',
]);

export const uniswapV3SwapRouterAbi = parseAbi([
  'struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }',
  'function exactInputSingle(ExactInputSingleParams params) payable returns (uint256 amountOut)',
  'struct ExactInputParams { bytes path; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; }',
  'function exactInput(ExactInputParams params) payable returns (uint256 amountOut)',
]);

export const uniswapV2FactoryAbi = parseAbi([
  'function getPair(address tokenA, address tokenB) view returns (address pair)',
]);

export const uniswapV2PairAbi = parseAbi([
  'function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)',
  'function token0() view returns (address)',
  'function token1() view returns (address)',
]);

export const uniswapV2RouterAbi = parseAbi([
  'function addLiquidity(address tokenA, address tokenB, uint256 amountADesired, uint256 amountBDesired, uint256 amountAMin, uint256 amountBMin, address to, uint256 deadline) returns (uint256 amountA, uint256 amountB, uint256 liquidity)',
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)',
  'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
  'function WETH() view returns (address)',
  'function factory() view returns (address)',
]);
