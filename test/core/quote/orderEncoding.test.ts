/**
 * The hand-written order encoding against viem's generic ABI encoder, the reference: byte for byte on a few
 * hundred varied orders (seeded, so a failure reproduces), the same order and request ids, the same call
 * entries; and invalid values throw instead of hashing something else.
 */
import { describe, expect, it } from 'vitest';
import { encodeAbiParameters, getAddress, keccak256, parseAbiParameters, toHex, type Address, type Hex } from 'viem';
import { buildOrder, ORDER_VERSION } from '../../../src/core/quote/order.js';
import {
  encodeCall,
  encodeOrder,
  encodeRequestIdPreimage,
  orderIdOf,
  requestIdOf,
  type OrderData,
} from '../../../src/core/quote/orderEncoding.js';
import type { Pricing } from '../../../src/core/quote/pricing.js';
import type { ResolvedRoute } from '../../../src/core/vocabulary/route.js';
import { makeChainConfig } from '../../helpers/chainConfig.js';

/** The reference: the layout as viem parses it (the same struct definitions as the protocol's). */
const ORDER_ABI = parseAbiParameters([
  'Order order',
  'struct Payment { string chainId; address currency; uint256 amount; uint256 weight; }',
  'struct Refund { string chainId; address recipient; address currency; uint256 minimumAmount; uint256 deadline; bytes extraData; }',
  'struct Input { Payment payment; Refund[] refunds; }',
  'struct OutputPayment { address recipient; address currency; uint256 minimumAmount; uint256 expectedAmount; }',
  'struct Output { string chainId; OutputPayment[] payments; bytes[] calls; uint256 deadline; bytes extraData; }',
  'struct Fee { address recipient; string chainId; address currency; uint256 amount; }',
  'struct Order { string version; string solverChainId; address solver; bytes32 salt; Input[] inputs; Output output; Fee[] fees; }',
]);
const CALL_ABI = parseAbiParameters('address to, bytes data, uint256 value');
const REQUEST_ID_ABI = parseAbiParameters('bytes32 orderId, uint256 originChainId');

/**
 * The reference encoding, in lower case: viem copies the digits of `bytes` values as they are given, so its hex
 * has upper-case letters where they had (the bytes are the same). viem wants bigint deadlines and addresses
 * lower-case or checksummed.
 */
function viemEncodeOrder(order: OrderData): Hex {
  const address = (value: Address) => value.toLowerCase() as Address;
  const encoded = encodeAbiParameters(ORDER_ABI, [
    {
      ...order,
      solver: address(order.solver),
      inputs: order.inputs.map((input) => ({
        payment: { ...input.payment, currency: address(input.payment.currency) },
        refunds: input.refunds.map((refund) => ({
          ...refund,
          recipient: address(refund.recipient),
          currency: address(refund.currency),
          deadline: BigInt(refund.deadline),
        })),
      })),
      output: {
        ...order.output,
        payments: order.output.payments.map((payment) => ({
          ...payment,
          recipient: address(payment.recipient),
          currency: address(payment.currency),
        })),
        deadline: BigInt(order.output.deadline),
      },
      fees: order.fees.map((fee) => ({ ...fee, recipient: address(fee.recipient), currency: address(fee.currency) })),
    },
  ]);
  return encoded.toLowerCase() as Hex;
}

/** mulberry32: a small seeded generator, so every run checks the same orders. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (below: number): number => Math.floor(next() * below);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const bytes = (length: number): Uint8Array => Uint8Array.from({ length }, () => int(256));
  const uint = (bits: number): bigint => {
    let value = 0n;
    for (let i = 0; i < bits; i += 8) value = (value << 8n) | BigInt(int(256));
    return value & ((1n << BigInt(bits)) - 1n);
  };
  return { next, int, pick, bytes, uint };
}
type Generator = ReturnType<typeof generator>;

const MAX_UINT256 = 2n ** 256n - 1n;

function randomAddress(g: Generator): Address {
  const hex = toHex(g.bytes(20));
  // Lower case, checksummed (mixed case), or with every letter upper case (not a valid checksum: the encoder
  // takes any casing, as the bytes are the same).
  const upperCase: Address = `0x${hex.slice(2).toUpperCase()}`;
  return g.pick([hex, getAddress(hex), upperCase, '0x0000000000000000000000000000000000000000']);
}
function randomUint(g: Generator): bigint {
  return g.pick([
    0n,
    1n,
    MAX_UINT256,
    MAX_UINT256 - 1n,
    2n ** 64n - 1n,
    2n ** 64n,
    2n ** 128n + 7n,
    g.uint(32),
    g.uint(64),
    g.uint(96),
    g.uint(256),
  ]);
}
function randomDeadline(g: Generator): number {
  return g.pick([0, 1, 1_700_000_000 + g.int(100_000_000), 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER]);
}
function randomBytes(g: Generator): Hex {
  const hex = toHex(g.bytes(g.pick([0, 1, 2, 31, 32, 33, 63, 64, 65, 100, 129, 200, 300])));
  return g.int(4) === 0 ? `0x${hex.slice(2).toUpperCase()}` : hex;
}
function randomString(g: Generator): string {
  return g.pick([
    '',
    'ethereum',
    'base',
    'a'.repeat(31),
    'b'.repeat(32),
    'c'.repeat(33),
    'chain-'.repeat(30),
    'Zürich',
    'チェーン',
    'bridge 🌉 chain',
    'ü'.repeat(16),
    'lone \ud800 surrogate',
  ]);
}
const times = <T>(count: number, make: () => T): T[] => Array.from({ length: count }, make);

function randomOrder(g: Generator): OrderData {
  return {
    version: g.pick([ORDER_VERSION, '', 'v1-long-version-string-over-thirty-two-bytes']),
    solverChainId: randomString(g),
    solver: randomAddress(g),
    salt: toHex(g.bytes(32)),
    inputs: times(g.pick([0, 1, 1, 2, 3]), () => ({
      payment: { chainId: randomString(g), currency: randomAddress(g), amount: randomUint(g), weight: randomUint(g) },
      refunds: times(g.int(4), () => ({
        chainId: randomString(g),
        recipient: randomAddress(g),
        currency: randomAddress(g),
        minimumAmount: randomUint(g),
        deadline: randomDeadline(g),
        extraData: randomBytes(g),
      })),
    })),
    output: {
      chainId: randomString(g),
      payments: times(g.int(4), () => ({
        recipient: randomAddress(g),
        currency: randomAddress(g),
        minimumAmount: randomUint(g),
        expectedAmount: randomUint(g),
      })),
      calls: times(g.int(4), () =>
        encodeCall({ to: getAddress(toHex(g.bytes(20))), data: randomBytes(g), value: randomUint(g) }),
      ),
      deadline: randomDeadline(g),
      extraData: randomBytes(g),
    },
    fees: times(g.int(4), () => ({
      recipient: randomAddress(g),
      chainId: randomString(g),
      currency: randomAddress(g),
      amount: randomUint(g),
    })),
  };
}

describe('encodeOrder', () => {
  it('matches viem encodeAbiParameters byte for byte, with the same order and request ids, on 400 varied orders', () => {
    const g = generator(20_240_611);
    for (let i = 0; i < 400; i++) {
      const order = randomOrder(g);
      const expected = viemEncodeOrder(order);
      expect(toHex(encodeOrder(order)), `order ${i}`).toBe(expected);
      const orderId = orderIdOf(order);
      expect(orderId, `order ${i}`).toBe(keccak256(expected));
      const chainId = g.pick([0, 1, 8453, 2 ** 31 - 1, Number.MAX_SAFE_INTEGER]);
      const expectedRequestId = keccak256(encodeAbiParameters(REQUEST_ID_ABI, [orderId, BigInt(chainId)]));
      expect(requestIdOf(orderId, chainId)).toBe(expectedRequestId);
      expect(requestIdOf(orderId, BigInt(chainId))).toBe(expectedRequestId);
      expect(toHex(encodeRequestIdPreimage(orderId, chainId))).toBe(
        encodeAbiParameters(REQUEST_ID_ABI, [orderId, BigInt(chainId)]),
      );
    }
  });

  it('encodes the edge cases: no inputs, calls or fees; empty strings and bytes; extreme values; large orders', () => {
    const zero = '0x0000000000000000000000000000000000000000';
    const orders: OrderData[] = [
      {
        version: '',
        solverChainId: '',
        solver: zero,
        salt: `0x${'00'.repeat(32)}`,
        inputs: [],
        output: { chainId: '', payments: [], calls: [], deadline: 0, extraData: '0x' },
        fees: [],
      },
      {
        version: 'v1',
        solverChainId: 'é',
        solver: `0x${'ff'.repeat(20)}`,
        salt: `0x${'FF'.repeat(32)}`,
        inputs: [{ payment: { chainId: 'x', currency: zero, amount: MAX_UINT256, weight: 0n }, refunds: [] }],
        output: {
          chainId: 'y',
          payments: [],
          calls: ['0x', '0x00', `0x${'ab'.repeat(1000)}`],
          deadline: Number.MAX_SAFE_INTEGER,
          extraData: `0x${'cd'.repeat(33)}`,
        },
        fees: [{ recipient: zero, chainId: '', currency: zero, amount: MAX_UINT256 }],
      },
      // Larger than the encoder's initial buffer (8 KB), which grows mid-encoding.
      {
        version: 'v1',
        solverChainId: 'chain-'.repeat(2000),
        solver: zero,
        salt: `0x${'11'.repeat(32)}`,
        inputs: [],
        output: {
          chainId: 'z',
          payments: [],
          calls: [`0x${'12'.repeat(20_000)}`, '0x34'],
          deadline: 1,
          extraData: `0x${'56'.repeat(5000)}`,
        },
        fees: [{ recipient: zero, chainId: 'ü'.repeat(3000), currency: zero, amount: 1n }],
      },
    ];
    for (const order of orders) {
      expect(toHex(encodeOrder(order))).toBe(viemEncodeOrder(order));
      expect(orderIdOf(order)).toBe(keccak256(viemEncodeOrder(order)));
    }
  });

  it('throws a clear error on an invalid value, and encodes the next order correctly', () => {
    const g = generator(7);
    const valid = (): OrderData => randomOrder(g);
    const payment = (recipient: Address) => ({ recipient, currency: recipient, minimumAmount: 0n, expectedAmount: 0n });
    const fee = (o: OrderData, amount: bigint) => ({ recipient: o.solver, chainId: 'c', currency: o.solver, amount });
    const cases: Array<[string, (order: OrderData) => void, RegExp]> = [
      ['short address', (o) => (o.solver = '0x1234'), /solver must be an address/],
      ['address without 0x', (o) => (o.solver = `00${'11'.repeat(20)}` as Address), /solver must be an address/],
      [
        'address with a non-hex digit',
        (o) => (o.output.payments = [payment(`0x${'1'.repeat(39)}g`)]),
        /output\.payments\[\]\.recipient must be an address/,
      ],
      ['negative amount', (o) => (o.fees = [fee(o, -1n)]), /fees\[\]\.amount must be a uint256/],
      ['amount of 2^256', (o) => (o.fees = [fee(o, 2n ** 256n)]), /fees\[\]\.amount must be a uint256/],
      ['fractional deadline', (o) => (o.output.deadline = 1.5), /output\.deadline must be a uint256/],
      ['negative deadline', (o) => (o.output.deadline = -1), /output\.deadline must be a uint256/],
      ['unsafe deadline', (o) => (o.output.deadline = 2 ** 53), /output\.deadline must be a uint256/],
      ['odd hex digits', (o) => (o.output.extraData = '0x123'), /output\.extraData must be bytes/],
      ['bytes with a non-hex digit', (o) => (o.output.calls = ['0x12zz']), /output\.calls\[\] must be bytes/],
      [
        'long bytes with a non-hex digit at the end',
        (o) => (o.output.calls = [`0x${'ab'.repeat(500)}0g`]),
        /output\.calls\[\] must be bytes/,
      ],
      ['bytes without 0x', (o) => (o.output.extraData = 'abcd' as Hex), /output\.extraData must be bytes/],
      ['short salt', (o) => (o.salt = `0x${'00'.repeat(31)}`), /salt must be bytes32/],
      ['non-string chain id', (o) => (o.solverChainId = 8453 as unknown as string), /solverChainId must be a string/],
      ['missing fees', (o) => (o.fees = undefined as unknown as OrderData['fees']), /fees must be an array/],
      [
        'refund amount out of range',
        (o) =>
          (o.inputs = [
            {
              payment: { chainId: 'c', currency: o.solver, amount: 1n, weight: 1n },
              refunds: [
                {
                  chainId: 'c',
                  recipient: o.solver,
                  currency: o.solver,
                  minimumAmount: 2n ** 256n,
                  deadline: 0,
                  extraData: '0x',
                },
              ],
            },
          ]),
        /inputs\[\]\.refunds\[\]\.minimumAmount must be a uint256/,
      ],
    ];
    for (const [name, spoil, message] of cases) {
      const order = valid();
      spoil(order);
      expect(() => orderIdOf(order), name).toThrow(message);
      expect(() => encodeOrder(order), name).toThrow(message);
      // The scratch buffer was left clean: a valid order after the failure encodes exactly.
      const next = valid();
      expect(toHex(encodeOrder(next)), `after ${name}`).toBe(viemEncodeOrder(next));
      expect(orderIdOf(next), `after ${name}`).toBe(keccak256(viemEncodeOrder(next)));
    }
  });

  it('checks the request id inputs', () => {
    const orderId = keccak256('0x');
    expect(() => requestIdOf('0x1234', 1)).toThrow(/orderId must be bytes32/);
    expect(() => requestIdOf(orderId, -1)).toThrow(/originChainId must be a uint256/);
    expect(() => requestIdOf(orderId, 2n ** 256n)).toThrow(/originChainId must be a uint256/);
    expect(requestIdOf(orderId, 1)).toBe(keccak256(encodeAbiParameters(REQUEST_ID_ABI, [orderId, 1n])));
  });
});

describe('encodeCall', () => {
  it('spells a call entry exactly as viem does (address in lower case, data digits as given)', () => {
    const g = generator(99);
    for (let i = 0; i < 200; i++) {
      const call = { to: getAddress(toHex(g.bytes(20))), data: randomBytes(g), value: randomUint(g) };
      expect(encodeCall(call)).toBe(encodeAbiParameters(CALL_ABI, [call.to, call.data, call.value]));
    }
  });

  it('throws on an invalid call', () => {
    const to = getAddress(`0x${'12'.repeat(20)}`);
    expect(() => encodeCall({ to: '0x12', data: '0x', value: 0n })).toThrow(/call\.to must be an address/);
    expect(() => encodeCall({ to, data: '0x1', value: 0n })).toThrow(/call\.data must be bytes/);
    expect(() => encodeCall({ to, data: '0xzz', value: 0n })).toThrow(/call\.data must be bytes/);
    expect(() => encodeCall({ to, data: '0x', value: -1n })).toThrow(/call\.value must be a uint256/);
    expect(() => encodeCall({ to, data: '0x', value: 2n ** 256n })).toThrow(/call\.value must be a uint256/);
  });
});

describe('buildOrder', () => {
  it('derives the order id and request id of the order it returns', () => {
    const origin = makeChainConfig(10);
    const destination = makeChainConfig(8453);
    const user = getAddress(`0x${'a1'.repeat(20)}`);
    const route = {
      origin,
      destination,
      currencyIn: origin.currencies[0]!,
      currencyOut: destination.nativeCurrency,
      recipient: getAddress(`0x${'b2'.repeat(20)}`),
      refundTo: user,
      calls: [{ to: getAddress(`0x${'c3'.repeat(20)}`), data: '0xDEADbeef', value: 5n }],
    } as unknown as ResolvedRoute;
    const pricing = {
      amountIn: 1_000_000n,
      amountOut: 990_000n,
      minimumAmountOut: 985_000n,
      fees: {
        platform: 300n,
        appFees: [
          { recipient: user, amount: 200n },
          { recipient: user, amount: 0n },
        ],
      },
    } as unknown as Pricing;
    const salt = keccak256('0x01');
    const { order, requestId } = buildOrder({
      route,
      pricing,
      solver: user,
      deadline: 1_700_000_000,
      refundDeadline: 1_700_086_400,
      salt,
    });
    expect(order.orderData.fees).toHaveLength(2);
    expect(order.orderData.output.calls).toEqual([
      encodeAbiParameters(CALL_ABI, [route.calls[0]!.to, '0xDEADbeef', 5n]),
    ]);
    expect(order.orderId).toBe(keccak256(viemEncodeOrder(order.orderData)));
    expect(requestId).toBe(keccak256(encodeAbiParameters(REQUEST_ID_ABI, [order.orderId, 10n])));
    // Without a salt, a random one: every order its own id.
    const other = buildOrder({ route, pricing, solver: user, deadline: 1_700_000_000, refundDeadline: 1_700_086_400 });
    expect(other.order.orderData.salt).toMatch(/^0x[0-9a-f]{64}$/);
    expect(other.order.orderId).not.toBe(order.orderId);
    expect(other.order.orderId).toBe(keccak256(viemEncodeOrder(other.order.orderData)));
  });
});
