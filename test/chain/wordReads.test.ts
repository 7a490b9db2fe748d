/**
 * The hand-written `aggregate3` encoding against viem's ABI coder, the reference: byte for byte on varied
 * batches (seeded, so a failure reproduces), answers decoded as viem decodes them, malformed answers refused;
 * and the reader's batching and fallbacks against a stand-in node.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeFunctionData,
  encodeFunctionData,
  encodeFunctionResult,
  HttpRequestError,
  multicall3Abi,
  RpcRequestError,
  toHex,
  type Address,
  type Hex,
} from 'viem';
import {
  createWordReads,
  decodeAggregate3,
  encodeAggregate3,
  type Aggregate3Call,
  type Aggregate3Result,
} from '../../src/chain/wordReads.js';

const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** A small seeded generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The calls of `aggregate3` calldata, as viem reads them. */
function decodedCalls(data: Hex) {
  const { functionName, args } = decodeFunctionData({ abi: multicall3Abi, data });
  if (functionName !== 'aggregate3') throw new Error(`not aggregate3 but ${functionName}`);
  return args[0];
}

const lower = (address: Address): Address => address.toLowerCase() as Address;

const randomHex = (next: () => number, bytes: number, upper = false): Hex => {
  const digits = Array.from({ length: bytes }, () =>
    Math.floor(next() * 256)
      .toString(16)
      .padStart(2, '0'),
  ).join('');
  return `0x${upper ? digits.toUpperCase() : digits}`;
};

function randomCalls(next: () => number): Aggregate3Call[] {
  const count = 1 + Math.floor(next() * 6);
  // Call data of 0 to 100 bytes: empty, shorter and longer than a word, exactly a word.
  const sizes = [0, 4, 32, 36, 64, 68, 100];
  return Array.from({ length: count }, () => ({
    target: randomHex(next, 20, next() < 0.5),
    callData: randomHex(next, sizes[Math.floor(next() * sizes.length)]!),
  }));
}

describe('aggregate3 encoding', () => {
  it('matches viem byte for byte', () => {
    const next = random(14);
    for (let round = 0; round < 300; round++) {
      const calls = randomCalls(next);
      const ours = encodeAggregate3(calls);
      const reference = encodeFunctionData({
        abi: multicall3Abi,
        functionName: 'aggregate3',
        // viem takes addresses in lower case or checksummed; ours takes any casing.
        args: [calls.map((call) => ({ target: lower(call.target), allowFailure: true, callData: call.callData }))],
      });
      expect(ours).toBe(reference);
      expect(decodedCalls(ours).map((call) => ({ ...call, target: lower(call.target) }))).toEqual(
        calls.map((call) => ({ target: lower(call.target), allowFailure: true, callData: call.callData })),
      );
    }
  });

  it('decodes answers as viem does', () => {
    const next = random(41);
    for (let round = 0; round < 300; round++) {
      const count = 1 + Math.floor(next() * 6);
      const results: Aggregate3Result[] = Array.from({ length: count }, () => ({
        success: next() < 0.8,
        returnData: randomHex(next, [0, 1, 32, 33, 64, 96][Math.floor(next() * 6)]!),
      }));
      const data = encodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', result: results });
      expect(decodeAggregate3(data, count)).toEqual(results);
    }
  });

  it('refuses an answer that is not one result per call', () => {
    const one = encodeFunctionResult({
      abi: multicall3Abi,
      functionName: 'aggregate3',
      result: [{ success: true, returnData: toHex(5n, { size: 32 }) }],
    });
    expect(decodeAggregate3(one, 1)).toEqual([{ success: true, returnData: toHex(5n, { size: 32 }) }]);
    expect(decodeAggregate3(one, 2)).toBeNull();
    expect(decodeAggregate3('0x', 1)).toBeNull();
    expect(decodeAggregate3(one.slice(0, -64) as Hex, 1)).toBeNull();
    expect(decodeAggregate3(`${one}0` as Hex, 1)).toBeNull();
    expect(decodeAggregate3(`0x${'zz'.repeat(one.length / 2 - 1)}`, 1)).toBeNull();
    // A success flag that is not a bool, and an offset past the end.
    expect(
      decodeAggregate3(`${one.slice(0, 2 + 64 * 3)}${'0'.repeat(63)}2${one.slice(2 + 64 * 4)}` as Hex, 1),
    ).toBeNull();
    expect(
      decodeAggregate3(`${one.slice(0, 2 + 64 * 2)}${'0'.repeat(60)}ffff${one.slice(2 + 64 * 3)}` as Hex, 1),
    ).toBeNull();
  });
});

/** A stand-in node: answers each `eth_call` with `answer(calls)` and records the batches it was sent. */
function standIn(answer: (calls: readonly Aggregate3Call[]) => Hex | Error) {
  const batches: Aggregate3Call[][] = [];
  const client = {
    request: async ({ params }: { params: [{ to: Address; data: Hex }, string] }) => {
      const [{ to, data }, block] = params;
      expect(to).toBe(MULTICALL3);
      expect(block).toBe('latest');
      const calls = decodedCalls(data).map((call) => ({ target: call.target, callData: call.callData }));
      batches.push(calls);
      const result = answer(calls);
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return { client: client as unknown as Parameters<typeof createWordReads>[0], batches };
}

const word = (value: bigint): Hex => toHex(value, { size: 32 });
const answerWith = (results: Aggregate3Result[]): Hex =>
  encodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', result: results });

describe('createWordReads', () => {
  const target = (i: number): Address => `0x${(0x10000 + i).toString(16).padStart(40, '0')}`;

  it('sends the reads of one turn in one call and hands each its word', async () => {
    const { client, batches } = standIn((calls) =>
      answerWith(calls.map((call) => ({ success: true, returnData: word(BigInt(call.target)) }))),
    );
    const reads = createWordReads(client, MULTICALL3);
    const values = await Promise.all(Array.from({ length: 20 }, (_, i) => reads.read(target(i), '0x70a08231')));
    expect(values).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(target(i))));
    expect(batches).toHaveLength(1);
    // The next turn is a new call.
    expect(await reads.read(target(1), '0x70a08231')).toBe(BigInt(target(1)));
    expect(batches).toHaveLength(2);
  });

  it('gathers the reads of later turns while a call is in flight, until it is answered or for at most 1 ms', async () => {
    let release = () => {};
    let gate: Promise<void> | null = new Promise<void>((resolve) => (release = resolve));
    const { client: inner, batches } = standIn((calls) =>
      answerWith(calls.map((call) => ({ success: true, returnData: word(BigInt(call.target)) }))),
    );
    let sent = 0;
    const held = {
      request: async (args: unknown) => {
        sent++;
        const wait = gate;
        gate = null;
        if (wait !== null) await wait;
        return (inner.request as (args: unknown) => Promise<unknown>)(args);
      },
    } as unknown as Parameters<typeof createWordReads>[0];
    // No gathering deadline in this part: only the answer releases the next call.
    const reads = createWordReads(held, MULTICALL3, { gatherMs: 60_000 });
    const first = reads.read(target(0), '0x70a08231');
    await new Promise((resolve) => setImmediate(resolve));
    // The first call is out and held: reads of three later turns wait for it.
    const later: Array<Promise<bigint | undefined>> = [];
    for (let turn = 1; turn <= 3; turn++) {
      later.push(reads.read(target(turn), '0x70a08231'));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(sent).toBe(1);
    release();
    expect(await first).toBe(BigInt(target(0)));
    expect(await Promise.all(later)).toEqual([1, 2, 3].map((i) => BigInt(target(i))));
    expect(batches.map((batch) => batch.length)).toEqual([1, 3]);

    // With the default deadline, a call that stays out holds the next one back for about a millisecond only.
    gate = new Promise<void>(() => {});
    const prompt = createWordReads(held, MULTICALL3);
    void prompt.read(target(4), '0x70a08231');
    await new Promise((resolve) => setImmediate(resolve));
    const started = performance.now();
    expect(await prompt.read(target(5), '0x70a08231')).toBe(BigInt(target(5)));
    expect(performance.now() - started).toBeLessThan(100);
    expect(sent).toBe(4);
  });

  it('splits a turn into calls of at most batchBytes of call data', async () => {
    const { client, batches } = standIn((calls) =>
      answerWith(calls.map(() => ({ success: true, returnData: word(1n) }))),
    );
    const reads = createWordReads(client, MULTICALL3, { batchBytes: 100 });
    const callData = `0x70a08231${'00'.repeat(32)}` as Hex; // 36 bytes: two fit in 100
    const values = await Promise.all(Array.from({ length: 5 }, (_, i) => reads.read(target(i), callData)));
    expect(values).toEqual(Array(5).fill(1n));
    expect(batches.map((batch) => batch.length)).toEqual([2, 2, 1]);
  });

  it('answers undefined for a failed call, an answer that is not one word, and an RPC error', async () => {
    const { client } = standIn((calls) =>
      answerWith(
        (
          [
            { success: false, returnData: '0x' },
            { success: true, returnData: '0x' },
            { success: true, returnData: `${word(7n)}00` as Hex },
            { success: true, returnData: word(7n) },
          ] satisfies Aggregate3Result[]
        ).slice(0, calls.length),
      ),
    );
    const reads = createWordReads(client, MULTICALL3);
    expect(await Promise.all([0, 1, 2, 3].map((i) => reads.read(target(i), '0x70a08231')))).toEqual([
      undefined,
      undefined,
      undefined,
      7n,
    ]);
    const failing = createWordReads(
      standIn(() => new RpcRequestError({ body: {}, url: 'http://rpc', error: { code: -32005, message: 'limit' } }))
        .client,
      MULTICALL3,
    );
    expect(await failing.read(target(0), '0x70a08231')).toBeUndefined();
    const garbled = createWordReads(standIn(() => '0x1234').client, MULTICALL3);
    expect(await garbled.read(target(0), '0x70a08231')).toBeUndefined();
  });

  it('rejects every read of the call with the transport error when the node does not answer', async () => {
    const refused = new HttpRequestError({ url: 'http://rpc', details: 'connect ECONNREFUSED' });
    const reads = createWordReads(standIn(() => refused).client, MULTICALL3);
    const results = await Promise.allSettled([
      reads.read(target(0), '0x70a08231'),
      reads.read(target(1), '0x70a08231'),
    ]);
    expect(results).toEqual([
      { status: 'rejected', reason: refused },
      { status: 'rejected', reason: refused },
    ]);
  });
});
