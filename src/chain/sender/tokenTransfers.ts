import { decodeEventLog, erc20Abi, type Address, type Log } from 'viem';
import type { TokenTransfer } from '../../core/ports/solver.js';

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** The ERC-20 `Transfer` logs of a receipt that move tokens into or out of `wallet`. */
export function tokenTransfers(logs: readonly Log[], wallet: Address): TokenTransfer[] {
  const own = wallet.toLowerCase();
  const transfers: TokenTransfer[] = [];
  for (const log of logs) {
    // A Transfer with its amount in the data (an ERC-721's has four topics and no data).
    if (log.topics[0] !== TRANSFER_TOPIC || log.topics.length !== 3) continue;
    const { args } = decodeEventLog({ abi: erc20Abi, eventName: 'Transfer', topics: log.topics, data: log.data });
    if (args.from.toLowerCase() !== own && args.to.toLowerCase() !== own) continue;
    transfers.push({
      token: log.address.toLowerCase() as Address,
      from: args.from.toLowerCase() as Address,
      to: args.to.toLowerCase() as Address,
      amount: args.value,
      logIndex: log.logIndex ?? 0,
    });
  }
  return transfers;
}
