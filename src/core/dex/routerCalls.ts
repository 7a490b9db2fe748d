/**
 * The one router call that executes a DEX route: Uniswap v3's `SwapRouter` (or `SwapRouter02`, whose swap
 * structs have no deadline) `exactInput`, or v2's Router02 `swapExact…`. The fill's multicaller, the origin swap
 * router and a user's same-chain swap all send what this builds, so what was quoted is what runs.
 *
 * Native currency in or out rides on the route's WETH: paid as value (the routers wrap it), or unwrapped by the
 * router to the recipient after the swap.
 */
import { encodeFunctionData, encodePacked, parseAbi, type Address, type Hex } from 'viem';
import type { DexRoute } from './route.js';

/** Which v3 router a chain has: the original `SwapRouter` (deadline in its structs) or `SwapRouter02`. */
export type SwapRouterKind = 'SwapRouter' | 'SwapRouter02';

export const swapRouterAbi = parseAbi([
  'struct ExactInputParams { bytes path; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; }',
  'function exactInput(ExactInputParams params) payable returns (uint256 amountOut)',
  'function multicall(bytes[] data) payable returns (bytes[] results)',
  'function unwrapWETH9(uint256 amountMinimum, address recipient) payable',
]);

export const swapRouter02Abi = parseAbi([
  'struct ExactInputParams { bytes path; address recipient; uint256 amountIn; uint256 amountOutMinimum; }',
  'function exactInput(ExactInputParams params) payable returns (uint256 amountOut)',
  'function multicall(bytes[] data) payable returns (bytes[] results)',
  'function unwrapWETH9(uint256 amountMinimum, address recipient) payable',
]);

export const uniswapV2Router02Abi = parseAbi([
  'function swapExactTokensForTokens(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
  'function swapExactETHForTokens(uint256 amountOutMin, address[] path, address to, uint256 deadline) payable returns (uint256[] amounts)',
  'function swapExactTokensForETH(uint256 amountIn, uint256 amountOutMin, address[] path, address to, uint256 deadline) returns (uint256[] amounts)',
]);

/** `SwapRouter` sends to itself when the recipient is the zero address; `SwapRouter02` when it is `address(2)`. */
const ROUTER_CUSTODY: Record<SwapRouterKind, Address> = {
  SwapRouter: '0x0000000000000000000000000000000000000000',
  SwapRouter02: '0x0000000000000000000000000000000000000002',
};

export interface RouterSwapCallParameters {
  /** Who receives the output. */
  recipient: Address;
  /** The least output the swap may deliver: below it the router reverts. */
  amountOutMinimum: bigint;
  /** Unix seconds after which the router refuses the swap (v2, and `SwapRouter`). */
  deadline: bigint;
  /** The chain's v3 router kind; default `SwapRouter`. */
  v3RouterKind?: SwapRouterKind;
  /** Pay the input as native value (the route's first token is the chain's WETH). */
  nativeIn?: boolean;
  /** Deliver the output as native (the route's last token is the chain's WETH). */
  nativeOut?: boolean;
}

export interface RouterCall {
  to: Address;
  data: Hex;
  value: bigint;
}

/** Thrown for a route one router call cannot execute (hops of different sources or routers). */
export class UnroutableError extends Error {
  override readonly name = 'UnroutableError';
}

/** The router call that swaps exactly `route.amountIn` along `route`'s hops. */
export function routerSwapCall(route: DexRoute, params: RouterSwapCallParameters): RouterCall {
  const first = route.hops[0];
  if (first === undefined) throw new UnroutableError('a route without hops');
  if (route.hops.some((hop) => hop.source !== first.source || hop.router !== first.router))
    throw new UnroutableError('a route through more than one router');
  const value = params.nativeIn === true ? route.amountIn : 0n;
  if (first.source === 'uniswap-v2') return v2Call(route, first.router, params, value);
  return v3Call(route, first.router, params, value);
}

/** The packed v3 path: token, fee, token, fee, token… */
export function v3Path(route: DexRoute): Hex {
  const types: Array<'address' | 'uint24'> = ['address'];
  const values: Array<Address | number> = [route.hops[0]!.tokenIn];
  for (const hop of route.hops) {
    types.push('uint24', 'address');
    values.push(hop.fee, hop.tokenOut);
  }
  return encodePacked(types, values);
}

function v3Call(route: DexRoute, router: Address, params: RouterSwapCallParameters, value: bigint): RouterCall {
  const kind = params.v3RouterKind ?? 'SwapRouter';
  const recipient = params.nativeOut === true ? ROUTER_CUSTODY[kind] : params.recipient;
  const path = v3Path(route);
  const swap =
    kind === 'SwapRouter'
      ? encodeFunctionData({
          abi: swapRouterAbi,
          functionName: 'exactInput',
          args: [
            {
              path,
              recipient,
              deadline: params.deadline,
              amountIn: route.amountIn,
              amountOutMinimum: params.amountOutMinimum,
            },
          ],
        })
      : encodeFunctionData({
          abi: swapRouter02Abi,
          functionName: 'exactInput',
          args: [{ path, recipient, amountIn: route.amountIn, amountOutMinimum: params.amountOutMinimum }],
        });
  if (params.nativeOut !== true) return { to: router, data: swap, value };
  const unwrap = encodeFunctionData({
    abi: swapRouterAbi,
    functionName: 'unwrapWETH9',
    args: [params.amountOutMinimum, params.recipient],
  });
  return {
    to: router,
    data: encodeFunctionData({ abi: swapRouterAbi, functionName: 'multicall', args: [[swap, unwrap]] }),
    value,
  };
}

function v2Call(route: DexRoute, router: Address, params: RouterSwapCallParameters, value: bigint): RouterCall {
  const path = [route.hops[0]!.tokenIn, ...route.hops.map((hop) => hop.tokenOut)];
  const { recipient, amountOutMinimum: min, deadline } = params;
  if (params.nativeIn === true)
    return {
      to: router,
      data: encodeFunctionData({
        abi: uniswapV2Router02Abi,
        functionName: 'swapExactETHForTokens',
        args: [min, path, recipient, deadline],
      }),
      value,
    };
  const functionName = params.nativeOut === true ? 'swapExactTokensForETH' : 'swapExactTokensForTokens';
  return {
    to: router,
    data: encodeFunctionData({
      abi: uniswapV2Router02Abi,
      functionName,
      args: [route.amountIn, min, path, recipient, deadline],
    }),
    value: 0n,
  };
}
