/** What a test reads back from the devnet chains: balances and the contracts' events, from genesis. */
import { erc20Abi, zeroAddress, type Address, type Hex } from 'viem';
import { depositoryAbi, onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import type { DevnetChain } from '../../src/chain/devnet.js';
import { publicClientOf } from './quote.js';

/** `owner`'s balance of `token` on `chain`: native when `token` is the zero address, ERC-20 otherwise. */
export const balanceOf = (chain: DevnetChain, token: Address, owner: Address): Promise<bigint> =>
  token === zeroAddress
    ? publicClientOf(chain).getBalance({ address: owner })
    : publicClientOf(chain).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

/** The depository's `Deposit` events on `chain` for the request `id` or in one block. */
export const depositEvents = (chain: DevnetChain, where: { id: Hex } | { blockHash: Hex }) =>
  publicClientOf(chain).getContractEvents({
    address: chain.contracts.depository,
    abi: depositoryAbi,
    eventName: 'Deposit',
    ...('id' in where ? { args: { id: where.id }, fromBlock: 0n } : { blockHash: where.blockHash }),
  });

/** The depository's `Released` events on `chain` of the request `id` or of one deposit. */
export const releasedEvents = (chain: DevnetChain, args: { id: Hex } | { depositIndex: bigint }) =>
  publicClientOf(chain).getContractEvents({
    address: chain.contracts.depository,
    abi: depositoryAbi,
    eventName: 'Released',
    args,
    fromBlock: 0n,
  });

/** The multicaller's `Filled` events on `chain` of the request `id`. */
export const filledEvents = (chain: DevnetChain, id: Hex) =>
  publicClientOf(chain).getContractEvents({
    address: chain.contracts.onlyOwnerMulticaller,
    abi: onlyOwnerMulticallerAbi,
    eventName: 'Filled',
    args: { id },
    fromBlock: 0n,
  });
