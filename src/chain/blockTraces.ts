import { numberToHex, zeroAddress, type Address, type Hex, type PublicClient } from 'viem';
import type { Logger } from '../core/logger.js';
import type { InsertTransferParameters } from '../store/depositAddresses.repository.js';

/** One entry of `trace_block` (the parity/OpenEthereum form anvil, reth and erigon answer). */
export interface BlockTrace {
  type: string;
  action: {
    from?: Address;
    to?: Address;
    value?: Hex;
    callType?: string;
    address?: Address;
    refundAddress?: Address;
    balance?: Hex;
  };
  blockHash: Hex;
  transactionHash: Hex | null;
  traceAddress: number[];
  error?: string;
}

const isMethodUnsupported = (error: unknown): boolean => {
  const code = (error as { code?: unknown }).code ?? (error as { cause?: { code?: unknown } }).cause?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (
    code === -32601 ||
    code === -32004 ||
    /method .*(not found|not supported|not available|does not exist)|unsupported method/i.test(message)
  );
};

/**
 * Native value moved to a matching address in one block's traces: calls with value (top-level or internal) and
 * self-destructs. A frame that reverted, or below one that did, moved nothing. Each transfer's `logIndex` is -1 for
 * the transaction's own call (as when read from the block's transactions) and -(2 + its position among the
 * transaction's frames) for an internal one: stable across reads.
 */
export function nativeFromTraces(
  chainId: number,
  blockNumber: bigint,
  traced: readonly BlockTrace[],
  matches: (to: string) => boolean,
): Omit<InsertTransferParameters, 'now'>[] {
  const byTx = new Map<string, BlockTrace[]>();
  for (const frame of traced) {
    if (frame.transactionHash === null) continue; // block rewards
    const list = byTx.get(frame.transactionHash) ?? [];
    list.push(frame);
    byTx.set(frame.transactionHash, list);
  }
  const found: Omit<InsertTransferParameters, 'now'>[] = [];
  for (const [txHash, frames] of byTx) {
    const failed = frames.filter((frame) => frame.error !== undefined).map((frame) => frame.traceAddress.join('.'));
    const reverted = (frame: BlockTrace) =>
      failed.some((path) => {
        const own = frame.traceAddress.join('.');
        return path === '' || own === path || own.startsWith(`${path}.`);
      });
    frames.forEach((frame, position) => {
      const call = frame.type === 'call' && (frame.action.callType === undefined || frame.action.callType === 'call');
      const to = call ? frame.action.to : frame.type === 'suicide' ? frame.action.refundAddress : undefined;
      const value = call ? frame.action.value : frame.type === 'suicide' ? frame.action.balance : undefined;
      const from = call ? frame.action.from : frame.action.address;
      if (to === undefined || value === undefined || from === undefined || BigInt(value) === 0n) return;
      if (!matches(to.toLowerCase()) || reverted(frame)) return;
      found.push({
        chainId,
        address: to,
        txHash,
        logIndex: frame.traceAddress.length === 0 ? -1 : -(2 + position),
        blockNumber,
        blockHash: frame.blockHash,
        token: zeroAddress,
        amount: BigInt(value),
        depositor: from,
        status: 'seen',
      });
    });
  }
  return found;
}

/** Failed `trace_block` probes (other than an unknown method) after which a node is taken as one without traces. */
const PROBE_ATTEMPTS = 3;

/** A chain's block traces, when its node answers `trace_block`. */
export interface BlockTraces {
  /** The block's traces, or undefined when the node has no `trace_block`. */
  of(number: bigint): Promise<BlockTrace[] | undefined>;
}

export function createBlockTraces(client: PublicClient, log: Logger, context: object): BlockTraces {
  /**
   * Whether the node answers `trace_block` (probed once: a node without it says the method is unknown). With it,
   * native value moved by a contract's internal call (or a self-destruct) is found too; without it, only
   * transactions sent to the address are.
   */
  let traces: boolean | undefined;
  let probeFailures = 0;

  /** The block's traces, or undefined when the node has no `trace_block`. */
  async function of(number: bigint): Promise<BlockTrace[] | undefined> {
    if (traces === false) return undefined;
    try {
      const result = await client.request<{
        Parameters: [Hex];
        ReturnType: BlockTrace[] | null;
        Method: 'trace_block';
      }>({ method: 'trace_block', params: [numberToHex(number)] });
      if (traces === undefined) log.info(context, 'the node answers trace_block: internal native transfers are read');
      traces = true;
      return result ?? [];
    } catch (error) {
      if (traces !== undefined) throw error;
      // An unknown method ends the probe at once; any other failure is retried by the next passes, and after
      // PROBE_ATTEMPTS of them the node is taken as one without traces (a watcher must not stall on the probe).
      probeFailures++;
      if (isMethodUnsupported(error) || probeFailures >= PROBE_ATTEMPTS) {
        traces = false;
        log.info(
          { ...context, err: error },
          'no trace_block on this node: only native transactions sent to an address are read',
        );
        return undefined;
      }
      throw error;
    }
  }

  return { of };
}
