/**
 * Contract reads that answer one uint256 word (balances and allowances), batched into Multicall3 `aggregate3`
 * `eth_call`s, with the call encoded and its answer decoded by hand. With no batch of the chain in flight, the
 * reads of one turn of the event loop go at once; while one is in flight, the next gathers reads until that one is
 * answered or for at most 1 ms (viem's batches always waited 1 ms), so a busy gateway sends fewer, larger calls.
 *
 * Every quote reads the user's balance (and allowance). Through viem's `readContract` with multicall batching,
 * that one read cost more main-thread time than pricing, building and storing the whole quote: the generic ABI
 * encoder and decoder for `aggregate3` alone took about 100 µs per quote, plus the scheduler and contract-call
 * layers around them. Only the successful answer is decoded here: a sub-call that failed or returned anything but
 * one word, and an `eth_call` the node answered with an error, resolve `undefined`, and the caller reads again
 * through viem, whose error is the one the gateway has always reported. A failure of the transport itself (no
 * answer: timeout, refused connection, HTTP error) rejects with viem's error at once, as `readContract` would.
 * `test/chain/wordReads.test.ts` checks the encoding and decoding against viem's.
 */
import type { Address, Hex, PublicClient } from 'viem';
import { noAnswer } from './rpcErrors.js';

/** `aggregate3((address target, bool allowFailure, bytes callData)[])`. */
const AGGREGATE3_SELECTOR = '0x82ad56cb';
/** A batch holds at most this many bytes of calldata, as viem's multicall batching (`batchSize`) does. */
const DEFAULT_BATCH_BYTES = 4_096;
/** While a batch is in flight, the next one gathers reads for up to this long (viem's batches always wait 1 ms). */
const GATHER_MS = 1;

export interface WordReads {
  /**
   * The uint256 that `callData` returns when called on `target`; `undefined` when the call failed, returned
   * something else, or the node answered the batch with an error. Rejects with viem's transport error when the
   * node did not answer.
   */
  read(target: Address, callData: Hex): Promise<bigint | undefined>;
}

export interface Aggregate3Call {
  target: Address;
  callData: Hex;
}

export interface Aggregate3Result {
  success: boolean;
  returnData: Hex;
}

interface Pending extends Aggregate3Call {
  resolve: (value: bigint | undefined) => void;
  reject: (error: unknown) => void;
}

/** One chain's word reads through its Multicall3 at `multicall3`. */
export function createWordReads(
  client: Pick<PublicClient, 'request'>,
  multicall3: Address,
  { batchBytes = DEFAULT_BATCH_BYTES, gatherMs = GATHER_MS }: { batchBytes?: number; gatherMs?: number } = {},
): WordReads {
  let queue: Pending[] = [];
  let inFlight = 0;
  /** The pending flush of `queue`: at the next turn of the event loop, or a gathering timer. */
  let scheduled: { timer: NodeJS.Timeout } | 'immediate' | null = null;

  function schedule(): void {
    if (scheduled !== null) return;
    // With nothing in flight the reads of this turn go at once (a quiet gateway's quote waits for no timer);
    // while a batch is out, the next one gathers a little longer, or until that batch is answered.
    if (inFlight === 0) {
      scheduled = 'immediate';
      setImmediate(flush);
    } else {
      scheduled = { timer: setTimeout(flush, gatherMs) };
    }
  }

  async function send(batch: Pending[]): Promise<void> {
    inFlight++;
    try {
      await answer(batch);
    } finally {
      inFlight--;
      if (inFlight === 0 && scheduled !== null && scheduled !== 'immediate') {
        clearTimeout(scheduled.timer);
        scheduled = 'immediate';
        setImmediate(flush);
      }
    }
  }

  async function answer(batch: Pending[]): Promise<void> {
    let results: Aggregate3Result[] | null;
    try {
      const data = await client.request({
        method: 'eth_call',
        params: [{ to: multicall3, data: encodeAggregate3(batch) }, 'latest'],
      });
      results = decodeAggregate3(data, batch.length);
    } catch (error) {
      if (noAnswer(error)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      results = null;
    }
    for (let i = 0; i < batch.length; i++) {
      const result = results?.[i];
      // One word: `0x` and 64 hex digits.
      batch[i]!.resolve(
        result?.success === true && result.returnData.length === 66 ? BigInt(result.returnData) : undefined,
      );
    }
  }

  function flush(): void {
    if (scheduled !== null && scheduled !== 'immediate') clearTimeout(scheduled.timer);
    scheduled = null;
    const pending = queue;
    queue = [];
    if (pending.length === 0) return;
    let start = 0;
    let bytes = 0;
    for (let i = 0; i < pending.length; i++) {
      const size = (pending[i]!.callData.length - 2) / 2;
      if (i > start && bytes + size > batchBytes) {
        void send(pending.slice(start, i));
        start = i;
        bytes = 0;
      }
      bytes += size;
    }
    void send(start === 0 ? pending : pending.slice(start));
  }

  return {
    read(target, callData) {
      return new Promise((resolve, reject) => {
        queue.push({ target, callData, resolve, reject });
        schedule();
      });
    },
  };
}

/** 32-byte words as hex digits. */
const WORD_DIGITS = 64;
const word = (value: number): string => value.toString(16).padStart(WORD_DIGITS, '0');
const padRight = (digits: string): string => digits.padEnd(Math.ceil(digits.length / WORD_DIGITS) * WORD_DIGITS, '0');

/**
 * `aggregate3` calldata with `allowFailure` set on every call. Targets are addresses and calldata whole bytes
 * of hex (the gateway's own values: checked where they enter, not here).
 */
export function encodeAggregate3(calls: readonly Aggregate3Call[]): Hex {
  // The array's elements are dynamic tuples: a head of offsets (from just after the length), then the tuples.
  let heads = '';
  let tails = '';
  let offset = calls.length * 32;
  for (const { target, callData } of calls) {
    heads += word(offset);
    const data = callData.slice(2);
    const tuple = `${target.slice(2).toLowerCase().padStart(WORD_DIGITS, '0')}${word(1)}${word(0x60)}${word(data.length / 2)}${padRight(data)}`;
    tails += tuple;
    offset += tuple.length / 2;
  }
  return `${AGGREGATE3_SELECTOR}${word(0x20)}${word(calls.length)}${heads}${tails}`;
}

const ZERO_HIGH_DIGITS = '0'.repeat(WORD_DIGITS - 13);

/**
 * The `(bool success, bytes returnData)[]` an `aggregate3` call returns; null when `data` is not that with
 * exactly `count` results (every offset and length is checked against the data's end).
 */
export function decodeAggregate3(data: Hex, count: number): Aggregate3Result[] | null {
  const size = (data.length - 2) / 2;
  if (!Number.isInteger(size) || !/^0x[0-9a-fA-F]*$/.test(data)) return null;
  /** The word at byte `at` as a number, or -1 when it is past the end or above 2^52. */
  const number = (at: number): number => {
    if (at < 0 || at + 32 > size) return -1;
    const start = 2 + at * 2;
    if (data.slice(start, start + WORD_DIGITS - 13) !== ZERO_HIGH_DIGITS) return -1;
    return parseInt(data.slice(start + WORD_DIGITS - 13, start + WORD_DIGITS), 16);
  };
  const array = number(0);
  if (array < 0 || number(array) !== count) return null;
  const base = array + 32;
  const results = new Array<Aggregate3Result>(count);
  for (let i = 0; i < count; i++) {
    const offset = number(base + i * 32);
    if (offset < 0) return null;
    const tuple = base + offset;
    const success = number(tuple);
    const bytesOffset = number(tuple + 32);
    if ((success !== 0 && success !== 1) || bytesOffset < 0) return null;
    const length = number(tuple + bytesOffset);
    const start = tuple + bytesOffset + 32;
    if (length < 0 || start + length > size) return null;
    results[i] = { success: success === 1, returnData: `0x${data.slice(2 + start * 2, 2 + (start + length) * 2)}` };
  }
  return results;
}
