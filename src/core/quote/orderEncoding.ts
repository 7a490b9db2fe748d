/**
 * ABI encoding of a protocol v2 order, written by hand for this one layout, and the ids derived from it.
 *
 * The order id is keccak256 of `abi.encode(order)` (Solidity ABI, one parameter of type `Order`) with
 *
 * ```solidity
 * struct Payment { string chainId; address currency; uint256 amount; uint256 weight; }
 * struct Refund { string chainId; address recipient; address currency; uint256 minimumAmount; uint256 deadline; bytes extraData; }
 * struct Input { Payment payment; Refund[] refunds; }
 * struct OutputPayment { address recipient; address currency; uint256 minimumAmount; uint256 expectedAmount; }
 * struct Output { string chainId; OutputPayment[] payments; bytes[] calls; uint256 deadline; bytes extraData; }
 * struct Fee { address recipient; string chainId; address currency; uint256 amount; }
 * struct Order { string version; string solverChainId; address solver; bytes32 salt; Input[] inputs; Output output; Fee[] fees; }
 * ```
 *
 * and the request id keccak256 of `abi.encode(bytes32 orderId, uint256 originChainId)`. Every quote computes
 * both. viem's generic `encodeAbiParameters` (hex strings throughout) cost more than the rest of building
 * the order; this encoder writes the bytes straight into a reused buffer and hashes them from there
 * (`keccak256Bytes`, no hex round trip). `test/core/quote/orderEncoding.test.ts` checks it byte for byte
 * against viem on a few hundred varied orders.
 *
 * Encoding rules (Solidity ABI spec): a tuple is its head (one 32-byte word per field: the value of a static
 * field, or for a dynamic one the offset of its encoding from the start of the tuple) followed by the
 * encodings of its dynamic fields in order. A dynamic array is its length then, like a tuple, its elements
 * (heads and tails, offsets from just after the length). `string` / `bytes` are the length then the data,
 * zero-padded to a multiple of 32. Static values are one word: addresses and integers right-aligned, `bytes32`
 * as is. Values are checked as they are written (addresses of 20 bytes, integers in [0, 2^256), whole bytes
 * of hex); an invalid one throws an `Error` naming the field rather than hashing something else.
 */
import { maxUint256, type Hex } from 'viem';
import { keccak256Bytes } from '../keccak.js';
import type { ProtocolOrder } from './types.js';

/** The order as the protocol carries it (`deadline`s as numbers of seconds, amounts as bigint). */
export type OrderData = ProtocolOrder['orderData'];

type Uint = bigint | number;

const WORD = 32;
const MAX_UINT64 = (1n << 64n) - 1n;
/** Hex strings longer than this are decoded by Buffer (native); shorter ones by the loop below. */
const NATIVE_HEX_CHARS = 256;

/** Value of each ASCII hex digit, -1 for any other character code below 128. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX_VALUE[65 + i] = 10 + i;
  HEX_VALUE[97 + i] = 10 + i;
}

/**
 * The scratch buffer every encoding is written into. Between encodings it is all zeros, so padding and the
 * leading zeros of small values need no writes; `used` is how far the current encoding has reserved, which
 * is cleared again when it is done (also when it throws).
 */
let buffer = Buffer.alloc(8192);
let view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
let used = 0;

function reserve(end: number): void {
  if (end > buffer.length) {
    const grown = Buffer.alloc(Math.max(end, buffer.length * 2));
    buffer.copy(grown, 0, 0, used);
    buffer = grown;
    view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }
  if (end > used) used = end;
}

function clearScratch(): void {
  buffer.fill(0, 0, used);
  used = 0;
}

const padded = (length: number): number => Math.ceil(length / WORD) * WORD;

function invalid(field: string, expected: string, value: unknown): Error {
  const shown =
    typeof value === 'string'
      ? `'${value.length > 80 ? `${value.slice(0, 80)}...` : value}'`
      : typeof value === 'bigint'
        ? `${value}n`
        : String(value);
  return new Error(`Cannot encode the order: ${field} must be ${expected}, got ${shown}`);
}

/**
 * Decodes the hex digits `hex[from..to)` (an even count) into `buffer` at `at`; false if any is not a hex
 * digit (having maybe written some bytes: the caller throws, and the scratch is cleared).
 */
function decodeHex(hex: string, from: number, to: number, at: number): boolean {
  if (to - from > NATIVE_HEX_CHARS) {
    // Buffer stops at the first pair that is not hex; a short count means an invalid digit.
    return buffer.write(hex.slice(from, to), at, (to - from) / 2, 'hex') === (to - from) / 2;
  }
  for (let i = from; i < to; i += 2) {
    const high = hex.charCodeAt(i);
    const low = hex.charCodeAt(i + 1);
    const value = (high < 128 ? HEX_VALUE[high]! << 4 : -256) | (low < 128 ? HEX_VALUE[low]! : -1);
    if (value < 0) return false;
    buffer[at++] = value;
  }
  return true;
}

const isHexPrefixed = (value: unknown): value is string =>
  typeof value === 'string' &&
  value.length >= 2 &&
  value.charCodeAt(0) === 48 /* 0 */ &&
  value.charCodeAt(1) === 120; /* x */

/** A length or an offset (always far below 2^32). */
function writeSize(at: number, size: number): void {
  view.setUint32(at + 28, size);
}

function writeUint(at: number, value: Uint, field: string): void {
  if (typeof value === 'bigint') {
    if (value <= MAX_UINT64) {
      if (value < 0n) throw invalid(field, 'a uint256 (0 to 2^256 - 1)', value);
      view.setBigUint64(at + 24, value);
      return;
    }
    if (value > maxUint256) throw invalid(field, 'a uint256 (0 to 2^256 - 1)', value);
    for (let word = at + 24; word >= at; word -= 8) {
      view.setBigUint64(word, BigInt.asUintN(64, value));
      value >>= 64n;
    }
    return;
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(field, 'a uint256 (a bigint, or a non-negative safe integer)', value);
  }
  view.setUint32(at + 24, Math.floor(value / 0x1_0000_0000));
  view.setUint32(at + 28, value >>> 0);
}

function writeAddress(at: number, address: string, field: string): void {
  if (!isHexPrefixed(address) || address.length !== 42 || !decodeHex(address, 2, 42, at + 12)) {
    throw invalid(field, 'an address (0x and 40 hex digits)', address);
  }
}

function writeBytes32(at: number, value: Hex, field: string): void {
  if (!isHexPrefixed(value) || value.length !== 66 || !decodeHex(value, 2, 66, at)) {
    throw invalid(field, 'bytes32 (0x and 64 hex digits)', value);
  }
}

/** `bytes` at `at` (length, data, padding); returns the end. */
function encodeBytes(at: number, value: Hex, field: string): number {
  if (!isHexPrefixed(value) || value.length % 2 !== 0)
    throw invalid(field, 'bytes (0x and an even number of hex digits)', value);
  const length = (value.length - 2) / 2;
  const end = at + WORD + padded(length);
  reserve(end);
  writeSize(at, length);
  if (!decodeHex(value, 2, value.length, at + WORD))
    throw invalid(field, 'bytes (0x and an even number of hex digits)', value);
  return end;
}

/** `string` at `at`, UTF-8 (as Solidity and viem encode it; lone surrogates become U+FFFD); returns the end. */
function encodeString(at: number, value: string, field: string): number {
  if (typeof value !== 'string') throw invalid(field, 'a string', value);
  const count = value.length;
  let ascii = true;
  for (let i = 0; i < count; i++) {
    if (value.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  const length = ascii ? count : Buffer.byteLength(value, 'utf8');
  const end = at + WORD + padded(length);
  reserve(end);
  writeSize(at, length);
  if (ascii) {
    for (let i = 0, to = at + WORD; i < count; i++) buffer[to + i] = value.charCodeAt(i);
  } else {
    buffer.write(value, at + WORD, length, 'utf8');
  }
  return end;
}

/** A dynamic array of dynamic elements at `at`: length, offsets (from after the length), elements. */
function encodeArray<T>(
  at: number,
  items: readonly T[],
  field: string,
  encodeItem: (at: number, item: T) => number,
): number {
  const checked: unknown = items; // (`Array.isArray(items)` would narrow `items` to `any[]`)
  if (!Array.isArray(checked)) throw invalid(field, 'an array', items);
  const count = items.length;
  const base = at + WORD;
  let tail = base + count * WORD;
  reserve(tail);
  writeSize(at, count);
  for (let i = 0; i < count; i++) {
    writeSize(base + i * WORD, tail - base);
    tail = encodeItem(tail, items[i]!);
  }
  return tail;
}

type Input = OrderData['inputs'][number];
type Refund = Input['refunds'][number];
type Output = OrderData['output'];
type Fee = OrderData['fees'][number];

function encodePayment(at: number, payment: Input['payment']): number {
  reserve(at + 4 * WORD);
  writeSize(at, 4 * WORD);
  const end = encodeString(at + 4 * WORD, payment.chainId, 'inputs[].payment.chainId');
  writeAddress(at + WORD, payment.currency, 'inputs[].payment.currency');
  writeUint(at + 2 * WORD, payment.amount, 'inputs[].payment.amount');
  writeUint(at + 3 * WORD, payment.weight, 'inputs[].payment.weight');
  return end;
}

function encodeRefund(at: number, refund: Refund): number {
  reserve(at + 6 * WORD);
  writeSize(at, 6 * WORD);
  let tail = encodeString(at + 6 * WORD, refund.chainId, 'inputs[].refunds[].chainId');
  writeAddress(at + WORD, refund.recipient, 'inputs[].refunds[].recipient');
  writeAddress(at + 2 * WORD, refund.currency, 'inputs[].refunds[].currency');
  writeUint(at + 3 * WORD, refund.minimumAmount, 'inputs[].refunds[].minimumAmount');
  writeUint(at + 4 * WORD, refund.deadline, 'inputs[].refunds[].deadline');
  writeSize(at + 5 * WORD, tail - at);
  tail = encodeBytes(tail, refund.extraData, 'inputs[].refunds[].extraData');
  return tail;
}

function encodeInput(at: number, input: Input): number {
  reserve(at + 2 * WORD);
  writeSize(at, 2 * WORD);
  let tail = encodePayment(at + 2 * WORD, input.payment);
  writeSize(at + WORD, tail - at);
  tail = encodeArray(tail, input.refunds, 'inputs[].refunds', encodeRefund);
  return tail;
}

function encodeOutput(at: number, output: Output): number {
  reserve(at + 5 * WORD);
  writeSize(at, 5 * WORD);
  let tail = encodeString(at + 5 * WORD, output.chainId, 'output.chainId');
  // OutputPayment is static: the array is its length then the tuples inline, four words each.
  const payments = output.payments;
  if (!Array.isArray(payments)) throw invalid('output.payments', 'an array', payments);
  writeSize(at + WORD, tail - at);
  reserve(tail + WORD + payments.length * 4 * WORD);
  writeSize(tail, payments.length);
  tail += WORD;
  for (const payment of payments) {
    writeAddress(tail, payment.recipient, 'output.payments[].recipient');
    writeAddress(tail + WORD, payment.currency, 'output.payments[].currency');
    writeUint(tail + 2 * WORD, payment.minimumAmount, 'output.payments[].minimumAmount');
    writeUint(tail + 3 * WORD, payment.expectedAmount, 'output.payments[].expectedAmount');
    tail += 4 * WORD;
  }
  writeSize(at + 2 * WORD, tail - at);
  tail = encodeArray(tail, output.calls, 'output.calls', encodeCallBytes);
  writeUint(at + 3 * WORD, output.deadline, 'output.deadline');
  writeSize(at + 4 * WORD, tail - at);
  tail = encodeBytes(tail, output.extraData, 'output.extraData');
  return tail;
}

const encodeCallBytes = (at: number, call: Hex): number => encodeBytes(at, call, 'output.calls[]');

function encodeFee(at: number, fee: Fee): number {
  reserve(at + 4 * WORD);
  writeAddress(at, fee.recipient, 'fees[].recipient');
  writeSize(at + WORD, 4 * WORD);
  const end = encodeString(at + 4 * WORD, fee.chainId, 'fees[].chainId');
  writeAddress(at + 2 * WORD, fee.currency, 'fees[].currency');
  writeUint(at + 3 * WORD, fee.amount, 'fees[].amount');
  return end;
}

/** Writes `abi.encode(order)` at the start of the (clear) scratch buffer; returns its length. */
function encodeOrderInto(order: OrderData): number {
  if (typeof order !== 'object' || order === null) throw invalid('order', 'an object', order);
  // One dynamic parameter: its offset (32), then the Order tuple.
  const at = WORD;
  reserve(at + 7 * WORD);
  writeSize(0, WORD);
  writeSize(at, 7 * WORD);
  let tail = encodeString(at + 7 * WORD, order.version, 'version');
  writeSize(at + WORD, tail - at);
  tail = encodeString(tail, order.solverChainId, 'solverChainId');
  writeAddress(at + 2 * WORD, order.solver, 'solver');
  writeBytes32(at + 3 * WORD, order.salt, 'salt');
  writeSize(at + 4 * WORD, tail - at);
  tail = encodeArray(tail, order.inputs, 'inputs', encodeInput);
  writeSize(at + 5 * WORD, tail - at);
  if (typeof order.output !== 'object' || order.output === null) throw invalid('output', 'an object', order.output);
  tail = encodeOutput(tail, order.output);
  writeSize(at + 6 * WORD, tail - at);
  tail = encodeArray(tail, order.fees, 'fees', encodeFee);
  return tail;
}

/** `abi.encode(order)`: the bytes whose keccak256 is the order id. */
export function encodeOrder(order: OrderData): Uint8Array {
  try {
    const end = encodeOrderInto(order); // first: it may replace `buffer`
    return new Uint8Array(buffer.subarray(0, end));
  } finally {
    clearScratch();
  }
}

/** The order id: keccak256 of `abi.encode(order)`. */
export function orderIdOf(order: OrderData): Hex {
  try {
    const end = encodeOrderInto(order); // first: it may replace `buffer`
    return keccak256Bytes(buffer.subarray(0, end));
  } finally {
    clearScratch();
  }
}

/** Writes `abi.encode(bytes32 orderId, uint256 originChainId)` at the start of the scratch buffer (64 bytes). */
function encodeRequestIdInto(orderId: Hex, originChainId: Uint): number {
  reserve(2 * WORD);
  writeBytes32(0, orderId, 'orderId');
  writeUint(WORD, originChainId, 'originChainId');
  return 2 * WORD;
}

/** `abi.encode(bytes32 orderId, uint256 originChainId)`: the bytes whose keccak256 is the request id. */
export function encodeRequestIdPreimage(orderId: Hex, originChainId: Uint): Uint8Array {
  try {
    const end = encodeRequestIdInto(orderId, originChainId);
    return new Uint8Array(buffer.subarray(0, end));
  } finally {
    clearScratch();
  }
}

/**
 * The request id of an order on its origin chain: keccak256 of `abi.encode(bytes32 orderId, uint256
 * originChainId)`. A deposit carries it, so it is attributable to exactly one order.
 */
export function requestIdOf(orderId: Hex, originChainId: Uint): Hex {
  try {
    const end = encodeRequestIdInto(orderId, originChainId);
    return keccak256Bytes(buffer.subarray(0, end));
  } finally {
    clearScratch();
  }
}

/**
 * A destination call as an entry of `Output.calls`: `abi.encode(address to, bytes data, uint256 value)`, as
 * hex. Built as a string, the way viem's `encodeAbiParameters` spells it (the address in lower case, the data
 * digits as given), so the order a client sees is unchanged.
 */
export function encodeCall(call: { to: Hex; data: Hex; value: bigint }): Hex {
  const { to, data, value } = call;
  if (!isHexPrefixed(to) || to.length !== 42 || !/^0x[0-9a-fA-F]{40}$/.test(to))
    throw invalid('call.to', 'an address (0x and 40 hex digits)', to);
  if (!isHexPrefixed(data) || data.length % 2 !== 0 || !/^0x[0-9a-fA-F]*$/.test(data)) {
    throw invalid('call.data', 'bytes (0x and an even number of hex digits)', data);
  }
  if (typeof value !== 'bigint' || value < 0n || value > maxUint256)
    throw invalid('call.value', 'a uint256 (0 to 2^256 - 1)', value);
  const length = (data.length - 2) / 2;
  return `0x${'0'.repeat(24)}${to.slice(2).toLowerCase()}${'60'.padStart(64, '0')}${value.toString(16).padStart(64, '0')}${length
    .toString(16)
    .padStart(64, '0')}${data.slice(2)}${'0'.repeat((padded(length) - length) * 2)}`;
}
