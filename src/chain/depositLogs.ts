import {
  getAbiItem,
  isAddressEqual,
  parseEventLogs,
  zeroAddress,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { depositoryAbi, receiverAbi } from '../../generated/contracts/index.js';
import type { ChainConfig } from '../core/chains/types.js';
import { solverCarrierOf } from '../core/solver/solverCarrier.js';
import type { FollowedRange } from './follower/follower.js';
import { bloomBitsOf, mayHoldLogsOf } from './logsBloom.js';

export const depositEvents = [
  getAbiItem({ abi: depositoryAbi, name: 'Deposit' }),
  getAbiItem({ abi: receiverAbi, name: 'FundsForwarded' }),
] as const;

/** A deposit log decoded from `Deposit` (depository) or `FundsForwarded` (receiver, native, no index). */
export interface DepositLog {
  txHash: Hex;
  logIndex: number;
  blockNumber: bigint;
  blockHash: Hex;
  requestId: Hex;
  depositor: Hex;
  token: Hex;
  amount: bigint;
  depositIndex: bigint | null;
  /** The transaction's `from`: who sent the deposit, as the chain says (not the caller-chosen `depositor`). */
  sender?: Hex;
  /** When the solver sent the transaction: what it was (`solverCarrierOf`). */
  carrier?: string | null;
}

export type DecodableLog = ReturnType<typeof parseEventLogs<typeof depositEvents, true>>[number];

/** Reads and decodes one chain's deposit logs: the depository's `Deposit` and the receiver's `FundsForwarded`. */
export interface DepositLogReader {
  /** The deposits in a range: one `eth_getLogs`, or none when the range's announced header proves there are none. */
  read(range: FollowedRange): Promise<DepositLog[]>;
  decodeAll(logs: readonly DecodableLog[]): DepositLog[];
  /** What the transaction was, when the solver sent it: the solver's address alone says nothing of whose money. */
  carrierOf(tx: { from: Address; to: Address | null; input: Hex }): string | null;
}

export function createDepositLogReader(params: {
  chain: ChainConfig;
  client: PublicClient;
  solverAddress?: Address | undefined;
}): DepositLogReader {
  const { chain, client, solverAddress } = params;
  const depository = chain.contracts.depository;
  const receiver = chain.contracts.receiver;
  const logEmitters = [bloomBitsOf(depository), bloomBitsOf(receiver)];

  function carrierOf(tx: { from: Address; to: Address | null; input: Hex }): string | null {
    if (solverAddress === undefined || !isAddressEqual(tx.from, solverAddress)) return null;
    return solverCarrierOf(chain, tx);
  }

  /**
   * Adds each deposit's transaction sender (one `eth_getTransactionByHash` per transaction): logs do not carry
   * it, and the solver needs it to tell the order's user from someone else depositing under the same id.
   */
  async function withSenders(entries: DepositLog[]): Promise<DepositLog[]> {
    const hashes = [...new Set(entries.map((entry) => entry.txHash))];
    const senders = new Map(
      await Promise.all(
        hashes.map(async (hash) => {
          const tx = await client.getTransaction({ hash });
          return [hash, { sender: tx.from, carrier: carrierOf(tx) }] as const;
        }),
      ),
    );
    return entries.map((entry) => ({ ...entry, ...senders.get(entry.txHash)! }));
  }

  function decode(entry: DecodableLog): DepositLog | undefined {
    // Reorged-out logs (only subscriptions and filters report them) and pending ones are not deposits.
    if (
      entry.removed ||
      entry.blockHash === null ||
      entry.blockNumber === null ||
      entry.logIndex === null ||
      entry.transactionHash === null
    ) {
      return undefined;
    }
    const at = {
      txHash: entry.transactionHash,
      logIndex: entry.logIndex,
      blockNumber: entry.blockNumber,
      blockHash: entry.blockHash,
    };
    if (entry.eventName === 'Deposit' && isAddressEqual(entry.address, depository)) {
      const { id, depositor, token, amount, depositIndex } = entry.args;
      return { ...at, requestId: id, depositor, token, amount, depositIndex };
    }
    if (entry.eventName === 'FundsForwarded' && isAddressEqual(entry.address, receiver)) {
      const { id, from, amount } = entry.args;
      return { ...at, requestId: id, depositor: from, token: zeroAddress, amount, depositIndex: null };
    }
    return undefined;
  }

  const decodeAll = (logs: readonly DecodableLog[]): DepositLog[] =>
    logs.flatMap((entry) => {
      const decoded = decode(entry);
      return decoded === undefined ? [] : [decoded];
    });

  return {
    async read({ fromBlock, toBlock, header }) {
      // A pushed head whose header proves its block holds no log of either contract (no transaction, or a logs
      // bloom without them) needs no read: on an idle chain, most heads.
      if (header !== undefined && !mayHoldLogsOf(header, logEmitters)) return [];
      const logs = await client.getLogs({
        address: [depository, receiver],
        events: depositEvents,
        fromBlock,
        toBlock,
        strict: true,
      });
      return withSenders(decodeAll(logs));
    },
    decodeAll,
    carrierOf,
  };
}
