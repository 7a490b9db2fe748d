import { parseAbi, type Address, type Hex, type PublicClient } from 'viem';
import type { ChainConfig } from '../core/chains/types.js';
import { GatewayError } from '../core/errors.js';
import type { PermitChain, PermitStandard, PermitToken } from '../core/ports/permits.js';
import type { ChainClients } from './clients.js';
import { isRevert } from './rpcErrors.js';

const permitTokenAbi = parseAbi([
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function nonces(address owner) view returns (uint256)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function balanceOf(address owner) view returns (uint256)',
]);

/** An address no one holds a key to: probes read its (empty) state. */
const PROBE_OWNER: Address = '0x000000000000000000000000000000000000fee5';
const ZERO_NONCE: Hex = `0x${'0'.repeat(64)}`;

/**
 * Reads permit support from the tokens themselves. A call that reverts means "not supported"; a transport
 * failure is an RPC error (and is not cached), so a chain that is briefly down does not lose its permits.
 */
export function createPermitChain(chains: readonly ChainConfig[], clients: ChainClients): PermitChain {
  const cache = new Map<string, Promise<PermitToken>>();
  const clientOf = (chainId: number): { client: PublicClient; chain: ChainConfig } => {
    const client = clients.get(chainId);
    const chain = chains.find((candidate) => candidate.id === chainId);
    if (client === undefined || chain === undefined)
      throw new GatewayError('UNSUPPORTED_CHAIN', `Chain ${chainId} is not supported`);
    return { client, chain };
  };

  async function probe(chainId: number, token: Address): Promise<PermitToken> {
    const { client, chain } = clientOf(chainId);
    const attempt = async <T>(load: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await load();
      } catch (error) {
        if (isRevert(error)) return undefined;
        throw new GatewayError('RPC_HTTP_ERROR', `Chain ${chain.name}: reading the permit support of ${token} failed`, {
          cause: error,
        });
      }
    };
    const read = <T>(functionName: string, args: readonly unknown[] = []) =>
      attempt(
        () =>
          // One reader for six functions of differing shapes: the result type is the caller's.
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- tsc needs it
          client.readContract({ address: token, abi: permitTokenAbi, functionName, args } as never) as Promise<T>,
      );
    const [domain5267, name, version, nonce, separator, authorization] = await Promise.all([
      read<readonly [Hex, string, string, bigint, Address, Hex, readonly bigint[]]>('eip712Domain'),
      read<string>('name'),
      read<string>('version'),
      read<bigint>('nonces', [PROBE_OWNER]),
      read<Hex>('DOMAIN_SEPARATOR'),
      read<boolean>('authorizationState', [PROBE_OWNER, ZERO_NONCE]),
    ]);
    const domain =
      domain5267 !== undefined
        ? { name: domain5267[1], version: domain5267[2] }
        : name !== undefined
          ? { name, version: version ?? '1' }
          : undefined;
    const standards: PermitStandard[] = [];
    if (domain !== undefined && separator !== undefined) {
      if (authorization !== undefined) standards.push('eip3009');
      if (nonce !== undefined) standards.push('eip2612');
    }
    return { standards, domain: domain ?? { name: '', version: '' } };
  }

  return {
    token(chainId, token) {
      const key = `${chainId}:${token.toLowerCase()}`;
      let known = cache.get(key);
      if (known === undefined) {
        known = probe(chainId, token);
        cache.set(key, known);
        known.catch(() => cache.delete(key));
      }
      return known;
    },
    async permitNonce(chainId, token, owner) {
      const { client, chain } = clientOf(chainId);
      try {
        return await client.readContract({
          address: token,
          abi: permitTokenAbi,
          functionName: 'nonces',
          args: [owner],
        });
      } catch (error) {
        throw new GatewayError('RPC_HTTP_ERROR', `Chain ${chain.name}: reading the permit nonce of ${owner} failed`, {
          cause: error,
        });
      }
    },
    async allowance(chainId, token, owner, spender) {
      const { client, chain } = clientOf(chainId);
      try {
        return await client.readContract({
          address: token,
          abi: permitTokenAbi,
          functionName: 'allowance',
          args: [owner, spender],
        });
      } catch (error) {
        throw new GatewayError('RPC_HTTP_ERROR', `Chain ${chain.name}: reading the allowance of ${owner} failed`, {
          cause: error,
        });
      }
    },
    async balance(chainId, token, owner) {
      const { client, chain } = clientOf(chainId);
      try {
        return await client.readContract({
          address: token,
          abi: permitTokenAbi,
          functionName: 'balanceOf',
          args: [owner],
        });
      } catch (error) {
        throw new GatewayError('RPC_HTTP_ERROR', `Chain ${chain.name}: reading the balance of ${owner} failed`, {
          cause: error,
        });
      }
    },
    async authorizationUsed(chainId, token, owner, nonce) {
      const { client, chain } = clientOf(chainId);
      try {
        return await client.readContract({
          address: token,
          abi: permitTokenAbi,
          functionName: 'authorizationState',
          args: [owner, nonce],
        });
      } catch (error) {
        throw new GatewayError(
          'RPC_HTTP_ERROR',
          `Chain ${chain.name}: reading the authorization state of ${owner} failed`,
          { cause: error },
        );
      }
    },
  };
}
