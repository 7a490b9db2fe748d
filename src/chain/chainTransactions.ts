/** The core's reads of users' own transactions (`ChainTransactions`) over the chains' RPC clients. */
import {
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
  type Hex,
  type Log,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import type { ChainLog, ChainReceipt, ChainTransactions } from '../core/chains/chainTransactions.js';
import { GatewayError } from '../core/errors.js';
import type { ChainClients } from './clients.js';

export function createChainTransactions(clients: ChainClients): ChainTransactions {
  const clientOf = (chainId: number): PublicClient => {
    const client = clients.get(chainId);
    if (client === undefined) throw new GatewayError('UNSUPPORTED_CHAIN', `Chain ${chainId} is not supported`);
    return client;
  };
  return {
    async transaction(chainId, hash) {
      try {
        const tx = await clientOf(chainId).getTransaction({ hash });
        return {
          hash: tx.hash,
          from: tx.from,
          to: tx.to,
          input: tx.input,
          value: tx.value,
          blockNumber: tx.blockNumber,
        };
      } catch (error) {
        if (error instanceof TransactionNotFoundError) return null;
        throw error;
      }
    },
    async receipt(chainId, hash) {
      try {
        return receiptOf(await clientOf(chainId).getTransactionReceipt({ hash }));
      } catch (error) {
        if (error instanceof TransactionReceiptNotFoundError) return null;
        throw error;
      }
    },
    async waitForReceipt(chainId, hash, timeoutMs) {
      try {
        const receipt = await clientOf(chainId).waitForTransactionReceipt({
          hash,
          timeout: timeoutMs,
          pollingInterval: 250,
        });
        return receiptOf(receipt);
      } catch (error) {
        if (error instanceof WaitForTransactionReceiptTimeoutError) return null;
        throw error;
      }
    },
    async logs(chainId, { address, topics, fromBlock }) {
      const logs = await clientOf(chainId).request({
        method: 'eth_getLogs',
        params: [{ address, topics: [...topics], fromBlock: `0x${fromBlock.toString(16)}`, toBlock: 'latest' }],
      });
      return (logs as Log[]).map(logOf);
    },
  };
}

function receiptOf(receipt: TransactionReceipt): ChainReceipt {
  return { status: receipt.status, blockNumber: receipt.blockNumber, logs: receipt.logs.map(logOf) };
}

const logOf = (log: Log): ChainLog => ({
  address: log.address,
  topics: log.topics as readonly Hex[],
  data: log.data,
  transactionHash: log.transactionHash!,
});
