import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { finalityDepthOf } from '../../src/core/chains/types.js';
import { ConfigError, configFromEnvironment } from '../../src/server/config.js';
import { loadConfigFile, parseConfigFile } from '../../src/server/configFile.js';

const key = `0x${'11'.repeat(32)}`;
const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const contracts = {
  depository: address(1),
  receiver: address(2),
  multicaller: address(3),
  onlyOwnerMulticaller: address(4),
  approvalProxy: address(5),
  erc20Router: address(6),
  multicall3: address(7),
};
const validChain = {
  id: 8453,
  name: 'base',
  displayName: 'Base',
  httpRpcUrl: 'https://rpc.example/base',
  nativeCurrency: {
    id: 'eth',
    symbol: 'ETH',
    name: 'Ether',
    address: '0x0000000000000000000000000000000000000000',
    decimals: 18,
  },
  currencies: [
    {
      id: 'usdc',
      symbol: 'USDC',
      name: 'USD Coin',
      address: address(100),
      decimals: 6,
      price: { kind: 'fixed', usd: '1' },
    },
  ],
  contracts,
};

function problemsOf(text: string, env: Record<string, string> = { GATEWAY_SOLVER_PRIVATE_KEY: key }): string[] {
  try {
    parseConfigFile(text, env, 'gateway.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected the config to be rejected');
}

describe('config file', () => {
  it('parses a minimal file and fills defaults', () => {
    const config = parseConfigFile(JSON.stringify({ chains: [validChain] }), {
      GATEWAY_SOLVER_PRIVATE_KEY: key,
      PORT: '4100',
    });
    expect(config.port).toBe(4100);
    const chain = config.chains[0]!;
    expect(chain).toMatchObject({
      id: 8453,
      displayName: 'Base',
      wsRpcUrl: 'wss://rpc.example/base',
      hidden: false,
      confirmations: 2,
      tokenSupport: 'All',
    });
    expect(chain.partialDisableLimit).toBe(0n);
    // Nothing public unless the operator names it: the provider's endpoints are never published.
    expect(chain).toMatchObject({ publicHttpRpcUrl: null, publicWsRpcUrl: null });
    const published = parseConfigFile(
      JSON.stringify({
        chains: [{ ...validChain, publicHttpRpcUrl: 'https://mainnet.base.org', publicWsRpcUrl: 'wss://base.example' }],
      }),
      { GATEWAY_SOLVER_PRIVATE_KEY: key },
    ).chains[0]!;
    expect(published).toMatchObject({
      httpRpcUrl: 'https://rpc.example/base',
      publicHttpRpcUrl: 'https://mainnet.base.org',
      publicWsRpcUrl: 'wss://base.example',
    });
    expect(chain.currencies[0]).toMatchObject({
      id: 'usdc',
      solver: true,
      featured: true,
      price: { kind: 'fixed', usd: '1' },
    });
    expect(config.solverPrivateKey).toBe(key);
  });

  it("gives PGlite PostgreSQL's 128 MB buffer pool unless told otherwise, and none beside DATABASE_URL", () => {
    const file = JSON.stringify({ chains: [validChain] });
    expect(parseConfigFile(file, { GATEWAY_SOLVER_PRIVATE_KEY: key }).pgliteSharedBuffers).toBe('128MB');
    expect(
      parseConfigFile(file, { GATEWAY_SOLVER_PRIVATE_KEY: key, GATEWAY_PGLITE_SHARED_BUFFERS: '512MB' })
        .pgliteSharedBuffers,
    ).toBe('512MB');
    expect(
      parseConfigFile(file, {
        GATEWAY_SOLVER_PRIVATE_KEY: key,
        DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
      }).pgliteSharedBuffers,
    ).toBeUndefined();
  });

  it('waits 120 s before refunding a deposit for an unknown request unless told otherwise, 0 on the devnet', () => {
    const file = JSON.stringify({ chains: [validChain] });
    expect(parseConfigFile(file, { GATEWAY_SOLVER_PRIVATE_KEY: key }).unknownDepositGraceSeconds).toBe(120);
    expect(
      parseConfigFile(file, { GATEWAY_SOLVER_PRIVATE_KEY: key, GATEWAY_UNKNOWN_DEPOSIT_GRACE_SECONDS: '30' })
        .unknownDepositGraceSeconds,
    ).toBe(30);
    expect(configFromEnvironment({}, [], key as `0x${string}`).unknownDepositGraceSeconds).toBe(0);
    expect(
      problemsOf(file, { GATEWAY_SOLVER_PRIVATE_KEY: key, GATEWAY_UNKNOWN_DEPOSIT_GRACE_SECONDS: '1.5' }),
    ).toContain('GATEWAY_UNKNOWN_DEPOSIT_GRACE_SECONDS must be an integer 0..86400');
  });

  it('reports every problem at once, never the key itself', () => {
    const bad = {
      chains: [
        {
          ...validChain,
          httpRpcUrl: 'ftp://nope',
          contracts: { ...contracts, depository: 'not-an-address' },
          colour: 'red',
        },
        { ...validChain, name: 'base' },
      ],
      extra: 1,
    };
    const problems = problemsOf(JSON.stringify(bad), { GATEWAY_SOLVER_PRIVATE_KEY: '0xabc', PORT: 'eighty' });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('PORT'),
        expect.stringContaining('GATEWAY_SOLVER_PRIVATE_KEY must be 0x followed by 64 hex digits'),
        expect.stringContaining("unknown field 'extra'"),
        expect.stringContaining("unknown field 'colour'"),
        expect.stringContaining('gateway.json.chains.0.httpRpcUrl'),
        expect.stringContaining('gateway.json.chains.0.contracts.depository'),
      ]),
    );
    expect(problems.join('\n')).not.toContain('0xabc');
  });

  it('rejects duplicate chains and a missing solver key', () => {
    const problems = problemsOf(JSON.stringify({ chains: [validChain, validChain] }), {});
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('GATEWAY_SOLVER_PRIVATE_KEY is required'),
        expect.stringContaining('chain id 8453 is configured twice'),
        expect.stringContaining("chain name 'base' is configured twice"),
      ]),
    );
  });

  it('reads a chain finality depth: 64 blocks by default, never less than its confirmations, and refuses 0', () => {
    const parse = (chain: object) =>
      parseConfigFile(JSON.stringify({ chains: [{ ...validChain, ...chain }] }), { GATEWAY_SOLVER_PRIVATE_KEY: key })
        .chains[0]!;
    expect(finalityDepthOf(parse({}))).toBe(64);
    expect(finalityDepthOf(parse({ finalityDepth: 900 }))).toBe(900);
    expect(finalityDepthOf(parse({ confirmations: 100 }))).toBe(100);
    expect(finalityDepthOf(parse({ confirmations: 12, finalityDepth: 5 }))).toBe(12);
    expect(problemsOf(JSON.stringify({ chains: [{ ...validChain, finalityDepth: 0 }] }))).toEqual([
      expect.stringContaining('gateway.json.chains.0.finalityDepth'),
    ]);
  });

  it('reads the quote pricing policy over the defaults, and chain block times and feed age limits', () => {
    const chain = {
      ...validChain,
      blockTime: 0.25,
      nativeCurrency: {
        ...validChain.nativeCurrency,
        price: { kind: 'aggregatorV3', feed: address(9), maxAgeSeconds: 3600 },
      },
    };
    const quote = { ttlSeconds: 120, swapFeeBps: { minor: 50 }, minSameChainSwapUsd: '0.1' };
    const config = parseConfigFile(JSON.stringify({ chains: [chain], quote }), { GATEWAY_SOLVER_PRIVATE_KEY: key });
    expect(config.quote).toMatchObject({
      ttlSeconds: 120,
      refundWindowSeconds: 86_400,
      swapFeeBps: { bridge: 0, stablecoin: 2, major: 5, minor: 50 },
      minSameChainSwapUsdMicros: 100_000n,
    });
    expect(config.chains[0]).toMatchObject({
      blockTime: 0.25,
      nativeCurrency: { price: { kind: 'aggregatorV3', maxAgeSeconds: 3600 } },
    });
    expect(
      parseConfigFile(JSON.stringify({ chains: [validChain] }), { GATEWAY_SOLVER_PRIVATE_KEY: key }).chains[0]!
        .blockTime,
    ).toBe(2);
  });

  it("reads each chain's fee model: ethereum unless named, op-stack and arbitrum, nothing else", () => {
    const parse = (chain: object) =>
      parseConfigFile(JSON.stringify({ chains: [chain] }), { GATEWAY_SOLVER_PRIVATE_KEY: key }).chains[0]!.feeModel;
    expect(parse(validChain)).toBe('ethereum');
    expect(parse({ ...validChain, feeModel: 'op-stack' })).toBe('op-stack');
    expect(parse({ ...validChain, feeModel: 'arbitrum' })).toBe('arbitrum');
    expect(problemsOf(JSON.stringify({ chains: [{ ...validChain, feeModel: 'optimism' }] }))).toEqual([
      expect.stringContaining('gateway.json.chains.0.feeModel'),
    ]);
  });

  it('rejects quote settings out of range, naming each', () => {
    const problems = problemsOf(
      JSON.stringify({ chains: [validChain], quote: { swapFeeBps: { major: 20000 }, ttlSeconds: 1, colour: 'red' } }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('quote.swapFeeBps.major'),
        expect.stringContaining('quote.ttlSeconds'),
        expect.stringContaining("unknown field 'colour'"),
      ]),
    );
  });

  it('rejects text that is not JSON', () => {
    expect(problemsOf('{ chains: ')).toEqual([expect.stringContaining('gateway.json is not valid JSON')]);
  });

  it('accepts a fixed native price only with allowFixedNative or a feed that checks it', () => {
    const withNativePrice = (price: Record<string, unknown>) =>
      JSON.stringify({ chains: [{ ...validChain, nativeCurrency: { ...validChain.nativeCurrency, price } }] });

    expect(problemsOf(withNativePrice({ kind: 'fixed', usd: '3000' }))).toEqual([
      'gateway.json.chains.0.nativeCurrency.price: a fixed price for the native currency ETH needs a feed that checks it ("feed": "0x…") or "allowFixedNative": true to accept it unchecked (see "Price sources for chains without Chainlink" in docs/real-networks.md)',
    ]);
    expect(problemsOf(withNativePrice({ kind: 'fixed', usd: '3000', allowFixedNative: false }))).toHaveLength(1);

    const env = { GATEWAY_SOLVER_PRIVATE_KEY: key };
    const flagged = parseConfigFile(withNativePrice({ kind: 'fixed', usd: '3000', allowFixedNative: true }), env);
    expect(flagged.chains[0]!.nativeCurrency.price).toMatchObject({ kind: 'fixed', usd: '3000' });
    const checked = parseConfigFile(withNativePrice({ kind: 'fixed', usd: '3000', feed: address(200) }), env);
    expect(checked.chains[0]!.nativeCurrency.price).toMatchObject({
      kind: 'fixed',
      usd: '3000',
      feed: getAddress(address(200)),
    });
    // An ERC-20 (a stablecoin) may keep its fixed price without either.
    expect(
      parseConfigFile(JSON.stringify({ chains: [validChain] }), env).chains[0]!.currencies[0]!.price,
    ).toMatchObject({
      kind: 'fixed',
      usd: '1',
    });
  });
});

describe('the database of a gateway with a config file', () => {
  const write = (text: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gateway-config-db-'));
    const file = path.join(dir, 'gateway.json');
    writeFileSync(file, text);
    return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
  };
  const loadProblems = (file: string, env: Record<string, string>): string[] => {
    try {
      loadConfigFile(file, env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).problems;
    }
    return [];
  };

  it('refuses a file with neither DATABASE_URL nor GATEWAY_DATA_DIR, naming both, unless kept in memory on purpose', () => {
    const { file, remove } = write(JSON.stringify({ chains: [validChain] }));
    try {
      const [problem, ...more] = loadProblems(file, { GATEWAY_SOLVER_PRIVATE_KEY: key });
      expect(more).toEqual([]);
      expect(problem).toContain('DATABASE_URL');
      expect(problem).toContain('GATEWAY_DATA_DIR');
      expect(problem).toContain('GATEWAY_IN_MEMORY_DATABASE=true');

      expect(loadProblems(file, { GATEWAY_SOLVER_PRIVATE_KEY: key, GATEWAY_DATA_DIR: '/var/lib/gateway' })).toEqual([]);
      expect(
        loadProblems(file, { GATEWAY_SOLVER_PRIVATE_KEY: key, DATABASE_URL: 'postgres://gateway@127.0.0.1/gateway' }),
      ).toEqual([]);
      const inMemory = loadConfigFile(file, { GATEWAY_SOLVER_PRIVATE_KEY: key, GATEWAY_IN_MEMORY_DATABASE: 'true' });
      expect(inMemory.dataDir).toBeUndefined();
      expect(inMemory.databaseUrl).toBeUndefined();

      expect(loadProblems(file, { GATEWAY_SOLVER_PRIVATE_KEY: key, GATEWAY_IN_MEMORY_DATABASE: 'yes' })).toEqual([
        "GATEWAY_IN_MEMORY_DATABASE must be true or false, got 'yes'",
      ]);
      expect(
        loadProblems(file, {
          GATEWAY_SOLVER_PRIVATE_KEY: key,
          GATEWAY_IN_MEMORY_DATABASE: 'true',
          GATEWAY_DATA_DIR: '/var/lib/gateway',
        }),
      ).toEqual(['GATEWAY_IN_MEMORY_DATABASE=true cannot be set with DATABASE_URL or GATEWAY_DATA_DIR']);
    } finally {
      remove();
    }
  });

  it("reports the missing database with the file's own problems, all at once", () => {
    const { file, remove } = write(JSON.stringify({ chains: [validChain], unknown: true }));
    try {
      const problems = loadProblems(file, { GATEWAY_SOLVER_PRIVATE_KEY: key });
      expect(problems.some((problem) => problem.includes("unknown field 'unknown'"))).toBe(true);
      expect(problems.some((problem) => problem.includes('GATEWAY_DATA_DIR'))).toBe(true);
    } finally {
      remove();
    }
  });
});
