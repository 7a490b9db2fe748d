/**
 * A config file's per-chain `dex` section: parsed with addresses checksummed (the canonical Base deployments of
 * docs/configuration.md), absent when not given, and every mistake reported at once with its path.
 */
import { describe, expect, it } from 'vitest';
import { swapSourcesOf } from '../../src/core/chains/dexSources.js';
import { ConfigError } from '../../src/server/config.js';
import { parseConfigFile } from '../../src/server/configFile.js';

const key = `0x${'11'.repeat(32)}`;
const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const chain = {
  id: 8453,
  name: 'base',
  httpRpcUrl: 'https://rpc.example/base',
  nativeCurrency: { id: 'eth', symbol: 'ETH', name: 'Ether', address: address(0), decimals: 18 },
  contracts: Object.fromEntries(
    ['depository', 'receiver', 'multicaller', 'onlyOwnerMulticaller', 'approvalProxy', 'erc20Router', 'multicall3'].map(
      (name, i) => [name, address(i + 1)],
    ),
  ),
};
const WETH = '0x4200000000000000000000000000000000000006';
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const baseDex = {
  uniswapV3: {
    factory: '0x33128a8fC17869897dcE68Ed026d694621f6FDfD',
    swapRouter: '0x2626664c2603336E57B271c5C0b26F421741e481',
    quoterV2: '0x3d4e44Eb1374240CE5F1B871ab261CD16335B76a',
    positionManager: '0x03a520b32C04BF3bEEf7BEb72E919cf822Ed34f1',
    pools: [{ address: '0xd0b53d9277642d899df5c87a3966a349a798f224', token0: WETH, token1: USDC, fee: 500 }],
  },
  uniswapV2: {
    factory: '0x8909Dc15e40173Ff4699343b6eB8132c65e18eC6',
    router: '0x4752ba5dbc23f44d87826276bf6fd6b1c372ad24',
  },
};

const parse = (dex: unknown) =>
  parseConfigFile(
    JSON.stringify({ chains: [{ ...chain, ...(dex === undefined ? {} : { dex }) }] }),
    { GATEWAY_SOLVER_PRIVATE_KEY: key },
    'gateway.json',
  );

function problemsOf(dex: unknown): string[] {
  try {
    parse(dex);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected the config to be rejected');
}

describe('config file: dex', () => {
  it('parses the Uniswap deployments with checksummed addresses; a chain without dex has none', () => {
    const { dex } = parse(baseDex).chains[0]!;
    expect(dex).toEqual({
      uniswapV3: {
        ...baseDex.uniswapV3,
        pools: [{ address: '0xd0b53D9277642d899DF5C87A3966A349A798F224', token0: WETH, token1: USDC, fee: 500 }],
      },
      uniswapV2: { factory: baseDex.uniswapV2.factory, router: '0x4752ba5DBc23f44D87826276BF6Fd6b1C372aD24' },
    });
    expect(swapSourcesOf(parse(baseDex).chains[0]!)).toEqual(['solver-inventory', 'uniswap-v3', 'uniswap-v2']);
    expect(parse(undefined).chains[0]!.dex).toBeUndefined();
    expect(swapSourcesOf(parse(undefined).chains[0]!)).toEqual(['solver-inventory']);
    expect(swapSourcesOf(parse({ uniswapV2: baseDex.uniswapV2 }).chains[0]!)).toEqual([
      'solver-inventory',
      'uniswap-v2',
    ]);
  });

  it('reports every mistake at once, with its path', () => {
    const problems = problemsOf({
      uniswapV3: {
        factory: baseDex.uniswapV3.factory,
        swapRouter: 'not an address',
        pools: [{ address: address(9), token0: USDC, token1: WETH, fee: 500 }],
      },
      uniswapV2: { ...baseDex.uniswapV2, router02: address(1) },
      sushi: {},
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        "gateway.json.chains.0.dex: unknown field 'sushi'",
        "gateway.json.chains.0.dex.uniswapV3: missing 'quoterV2'",
        expect.stringMatching(/^gateway\.json\.chains\.0\.dex\.uniswapV3\.swapRouter: /),
        "gateway.json.chains.0.dex.uniswapV2: unknown field 'router02'",
      ]),
    );
    const order = problemsOf({
      uniswapV3: { ...baseDex.uniswapV3, pools: [{ address: address(9), token0: USDC, token1: WETH, fee: 500 }] },
      uniswapV2: { ...baseDex.uniswapV2, pools: [{ address: address(8), token0: WETH, token1: USDC, fee: 500 }] },
    });
    expect(order).toEqual([
      "gateway.json.chains.0.dex.uniswapV3.pools.0: token0 must be below token1 (the pool's own order), and differ from it",
      "gateway.json.chains.0.dex.uniswapV2.pools.0.fee: a Uniswap v2 pair's fee is 3000 (0.3 %)",
    ]);
  });
});
