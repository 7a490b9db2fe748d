/**
 * The chain catalogue on a real devnet: `GET /chains` returns every Chain field of the spec, conforming to the
 * contract, with the devnet's real contract and token addresses; GraphQL `chains` answers the same data from
 * the same core function; hidden chains appear only through `includeChains`; readiness reflects the chains.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, zeroAddress } from 'viem';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(async () => {
  await gateway?.stop();
});

const graphql = async (query: string, variables: Record<string, unknown> = {}) => {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { data?: any; errors?: any[] };
};

describe('GET /chains', () => {
  it('lists the three devnet chains with their deployed contracts and currencies', async () => {
    const { status, body } = await call(gateway.url, 'getChains');
    expect(status).toBe(200);
    expect(body.chains.map((c: { id: number }) => c.id)).toEqual([31337, 31338, 31339]);
    for (const chain of body.chains) {
      const devnetChain = gateway.devnet.descriptor.chains.find((c) => c.chainId === chain.id)!;
      expect(chain.vmType).toBe('evm');
      expect(chain.httpRpcUrl).toBe(devnetChain.rpcUrl);
      expect(chain.currency).toMatchObject({ symbol: 'ETH', address: zeroAddress, decimals: 18 });
      expect(chain.contracts.serviceReceiver).toBe(devnetChain.contracts.receiver);
      expect(chain.contracts.multicaller).toBe(devnetChain.contracts.multicaller);
      expect(chain.contracts.v3).toEqual({
        erc20Router: devnetChain.contracts.erc20Router,
        approvalProxy: devnetChain.contracts.approvalProxy,
      });
      expect(chain.protocol.v2.depository).toBe(devnetChain.contracts.depository);
      expect(chain.solverAddresses).toEqual([gateway.devnet.descriptor.solver.address]);
      const usdc = chain.erc20Currencies.find((c: { symbol: string }) => c.symbol === 'USDC');
      expect(usdc).toMatchObject({
        decimals: 6,
        supportsPermit: true,
        address: devnetChain.tokens.find((t) => t.symbol === 'USDC')!.address,
      });
      expect(chain.solverCurrencies.map((c: { symbol: string }) => c.symbol)).toEqual(
        expect.arrayContaining(['ETH', 'USDC', 'USDT', 'WETH', 'MNR', 'PUSD']),
      );
      expect(chain.partialDisableLimit).toBe(0);
    }
  });

  it('lists the long-tail token LONG on every chain: an ERC-20, not featured, not a solver currency', async () => {
    const { body } = await call(gateway.url, 'getChains');
    for (const chain of body.chains) {
      const long = gateway.devnet.descriptor.chains.find((c) => c.chainId === chain.id)!.longTailTokens[0]!;
      expect(chain.erc20Currencies.find((c: { symbol: string }) => c.symbol === 'LONG')).toMatchObject({
        id: 'long',
        address: long.address,
        decimals: 18,
        supportsBridging: false,
      });
      const symbols = (list: Array<{ symbol: string }>) => list.map((c) => c.symbol);
      expect(symbols(chain.featuredTokens)).not.toContain('LONG');
      expect(symbols(chain.solverCurrencies)).not.toContain('LONG');
    }
    // No feed prices it and the solver holds none: the pools do (a route through uniswap); with them excluded there is
    // no route, and other quotes are unchanged.
    const [a, b] = gateway.devnet.descriptor.chains;
    const quote = (currency: string, extra: Record<string, unknown> = {}) =>
      call(gateway.url, 'getQuote', {
        body: {
          ...extra,
          user: gateway.devnet.descriptor.accounts[0]!.address,
          originChainId: a!.chainId,
          destinationChainId: b!.chainId,
          originCurrency: zeroAddress,
          destinationCurrency: currency,
          amount: '1000000000000000000',
          tradeType: 'EXACT_INPUT',
        },
      });
    const toLong = await quote(b!.longTailTokens[0]!.address);
    expect(toLong.status).toBe(200);
    expect(toLong.body.details.route.destination.router).toMatch(/^uniswap-v[23]$/);
    const noPools = await quote(b!.longTailTokens[0]!.address, { excludedSwapSources: ['uniswap-v3', 'uniswap-v2'] });
    expect([noPools.status, noPools.body.errorCode]).toEqual([400, 'NO_SWAP_ROUTES_FOUND']);
    expect((await quote(b!.tokens.find((t) => t.id === 'usdc')!.address)).status).toBe(200);
  });

  it('points at contracts that really exist on each chain', async () => {
    const { body } = await call(gateway.url, 'getChains');
    for (const chain of body.chains) {
      const client = createPublicClient({ transport: http(chain.httpRpcUrl) });
      for (const address of [
        chain.contracts.serviceReceiver,
        chain.contracts.multicaller,
        chain.contracts.approvalProxy,
        chain.protocol.v2.depository,
      ]) {
        const code = await client.getCode({ address });
        expect(code && code.length > 2, `no code at ${address} on ${chain.id}`).toBe(true);
      }
    }
  });

  it('answers the same data as GraphQL `chains`', async () => {
    const { body } = await call(gateway.url, 'getChains');
    const result = await graphql(`
      {
        chains {
          id
          name
          displayName
          httpRpcUrl
          wsRpcUrl
          vmType
          depositEnabled
          disabled
          tokenSupport
          partialDisableLimit
          withdrawalFee
          depositFee
          surgeEnabled
          solverAddresses
          tags
          baseChainId
          currency {
            id
            symbol
            name
            address
            decimals
            supportsBridging
          }
          erc20Currencies {
            id
            symbol
            address
            decimals
            supportsPermit
          }
          solverCurrencies {
            id
            symbol
            name
            address
            decimals
          }
          contracts {
            multicall3
            multicaller
            onlyOwnerMulticaller
            serviceReceiver
            relayReceiver
            erc20Router
            approvalProxy
            v3 {
              erc20Router
              approvalProxy
            }
          }
          protocol {
            v2 {
              chainId
              depository
              depositoryVault
            }
          }
        }
      }
    `);
    expect(result.errors).toBeUndefined();
    const rest = body.chains.map((c: any) => ({
      id: c.id,
      name: c.name,
      displayName: c.displayName,
      httpRpcUrl: c.httpRpcUrl,
      wsRpcUrl: c.wsRpcUrl,
      vmType: c.vmType,
      depositEnabled: c.depositEnabled,
      disabled: c.disabled,
      tokenSupport: c.tokenSupport,
      partialDisableLimit: String(c.partialDisableLimit),
      withdrawalFee: c.withdrawalFee,
      depositFee: c.depositFee,
      surgeEnabled: c.surgeEnabled,
      solverAddresses: c.solverAddresses,
      tags: c.tags,
      baseChainId: c.baseChainId,
      currency: c.currency,
      erc20Currencies: c.erc20Currencies.map(({ id, symbol, address, decimals, supportsPermit }: any) => ({
        id,
        symbol,
        address,
        decimals,
        supportsPermit,
      })),
      solverCurrencies: c.solverCurrencies,
      contracts: c.contracts,
      protocol: c.protocol,
    }));
    const gql = result.data.chains.map((c: any) => ({
      ...c,
      vmType: String(c.vmType).toLowerCase(),
      tokenSupport: c.tokenSupport === 'ALL' ? 'All' : c.tokenSupport === 'LIMITED' ? 'Limited' : c.tokenSupport,
    }));
    expect(gql).toEqual(rest);
  });
});

describe('readiness and documentation', () => {
  it('is ready when the database and every chain answer', async () => {
    const { status, body } = await call(gateway.url, 'getReadiness');
    expect(status).toBe(200);
    expect(body.status).toBe('ready');
    // A fresh database on a devnet whose contracts the solver key deployed has read each chain's history first
    // (`history:<id>`, ok once rebuilt); the rest are the database and every chain's RPC.
    expect(Object.keys(body.checks).filter((name) => !name.startsWith('history:'))).toEqual([
      'chain:31337',
      'chain:31338',
      'chain:31339',
      'database',
    ]);
    for (const [name, check] of Object.entries(body.checks as Record<string, { ok: boolean }>)) {
      expect(check.ok, name).toBe(true);
    }
  });

  it('is live', async () => {
    const { status, body } = await call(gateway.url, 'getHealth');
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok' });
  });

  it('serves the OpenAPI document and a reference page whose assets come from the gateway itself', async () => {
    const json = await (await fetch(`${gateway.url}/documentation/json`)).json();
    expect(json.openapi).toMatch(/^3\.1/);
    expect(Object.keys(json.paths)).toEqual(expect.arrayContaining(['/chains', '/quote/v2', '/intents/status/v3']));
    const page = await fetch(`${gateway.url}/documentation`);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="(\/documentation\/[^"]+)"/g)].map(([, url]) => url!);
    expect(assets).toContain('/documentation/static/swagger-ui-bundle.js');
    for (const asset of assets) expect((await fetch(`${gateway.url}${asset}`)).status, asset).toBe(200);
    expect(await (await fetch(`${gateway.url}/documentation/init.js`)).text()).toContain('"getQuote":"quote"');
    expect((await fetch(`${gateway.url}/documentation/static/package.json`)).status).toBe(404);
  });
});
