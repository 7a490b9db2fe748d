import type { Hex } from 'viem';

/**
 * keccak256, as viem's `keccak256` computes it, made fast for the order ids every quote hashes (an encoded order
 * is about 2 KB, 13 to 17 blocks of the sponge). The gateway runs with `--liftoff-only` (WebAssembly stays in V8's
 * baseline compiler, see `src/server/v8Tuning.ts`), and there hash-wasm's WebAssembly Keccak, ~10 µs for 2 KB when
 * optimized, took ~54 µs; noble's (viem's) takes ~120 µs. This one is plain JavaScript, which TurboFan optimizes
 * either way: Keccak-f[1600] over 32-bit halves of the 64-bit lanes, one round unrolled over 50 local variables.
 * It is synchronous and keeps its state in module scope, so no two calls interleave.
 * `test/core/keccak.test.ts` checks it against viem on every length across the block boundaries.
 */

/** The sponge's rate for a 256-bit output: 136 bytes, 17 lanes. */
const RATE = 136;

/** The 24 round constants, each as its low then its high 32 bits. */
const ROUND_CONSTANTS = new Int32Array(48);
[
  0x0000000000000001n,
  0x0000000000008082n,
  0x800000000000808an,
  0x8000000080008000n,
  0x000000000000808bn,
  0x0000000080000001n,
  0x8000000080008081n,
  0x8000000000008009n,
  0x000000000000008an,
  0x0000000000000088n,
  0x0000000080008009n,
  0x000000008000000an,
  0x000000008000808bn,
  0x800000000000008bn,
  0x8000000000008089n,
  0x8000000000008003n,
  0x8000000000008002n,
  0x8000000000000080n,
  0x000000000000800an,
  0x800000008000000an,
  0x8000000080008081n,
  0x8000000000008080n,
  0x0000000080000001n,
  0x8000000080008008n,
].forEach((constant, i) => {
  ROUND_CONSTANTS[2 * i] = Number(BigInt.asIntN(32, constant));
  ROUND_CONSTANTS[2 * i + 1] = Number(BigInt.asIntN(32, constant >> 32n));
});

/** The state: lane `x + 5y` is `state[2(x + 5y)]` (low 32 bits) and `state[2(x + 5y) + 1]` (high). */
const state = new Int32Array(50);
/** The last, padded block. */
const lastBlock = new Uint8Array(RATE);
/** Two lower-case hex digits per byte value. */
const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** keccak256 of bytes, as 0x-prefixed lower-case hex. */
export function keccak256Bytes(data: Uint8Array): Hex {
  state.fill(0);
  const whole = data.length - (data.length % RATE);
  for (let offset = 0; offset < whole; offset += RATE) absorb(data, offset);
  lastBlock.fill(0);
  lastBlock.set(data.subarray(whole));
  lastBlock[data.length - whole]! ^= 0x01;
  lastBlock[RATE - 1]! ^= 0x80;
  absorb(lastBlock, 0);
  let hex = '0x';
  for (let i = 0; i < 8; i++) {
    const word = state[i]!;
    hex += HEX_BYTES[word & 0xff]! + HEX_BYTES[(word >>> 8) & 0xff]! + HEX_BYTES[(word >>> 16) & 0xff]!;
    hex += HEX_BYTES[word >>> 24]!;
  }
  return hex as Hex;
}

/** XORs one block (`RATE` bytes from `offset`, little-endian 32-bit words) into the state and permutes it. */
function absorb(data: Uint8Array, offset: number): void {
  for (let i = 0; i < RATE / 4; i++, offset += 4) {
    state[i]! ^= data[offset]! | (data[offset + 1]! << 8) | (data[offset + 2]! << 16) | (data[offset + 3]! << 24);
  }
  permute(state);
}

/**
 * Keccak-f[1600]: 24 rounds of theta, rho and pi, chi and iota (FIPS 202, section 3.2), each 64-bit lane as two
 * 32-bit halves (`aNl` low, `aNh` high, lane N = x + 5y); rotations combine the two halves.
 */
function permute(s: Int32Array): void {
  let a0l = s[0]!,
    a0h = s[1]!,
    a1l = s[2]!,
    a1h = s[3]!,
    a2l = s[4]!,
    a2h = s[5]!,
    a3l = s[6]!,
    a3h = s[7]!,
    a4l = s[8]!,
    a4h = s[9]!,
    a5l = s[10]!,
    a5h = s[11]!,
    a6l = s[12]!,
    a6h = s[13]!,
    a7l = s[14]!,
    a7h = s[15]!,
    a8l = s[16]!,
    a8h = s[17]!,
    a9l = s[18]!,
    a9h = s[19]!,
    a10l = s[20]!,
    a10h = s[21]!,
    a11l = s[22]!,
    a11h = s[23]!,
    a12l = s[24]!,
    a12h = s[25]!,
    a13l = s[26]!,
    a13h = s[27]!,
    a14l = s[28]!,
    a14h = s[29]!,
    a15l = s[30]!,
    a15h = s[31]!,
    a16l = s[32]!,
    a16h = s[33]!,
    a17l = s[34]!,
    a17h = s[35]!,
    a18l = s[36]!,
    a18h = s[37]!,
    a19l = s[38]!,
    a19h = s[39]!,
    a20l = s[40]!,
    a20h = s[41]!,
    a21l = s[42]!,
    a21h = s[43]!,
    a22l = s[44]!,
    a22h = s[45]!,
    a23l = s[46]!,
    a23h = s[47]!,
    a24l = s[48]!,
    a24h = s[49]!;
  let b0l: number,
    b0h: number,
    b1l: number,
    b1h: number,
    b2l: number,
    b2h: number,
    b3l: number,
    b3h: number,
    b4l: number,
    b4h: number,
    b5l: number,
    b5h: number,
    b6l: number,
    b6h: number,
    b7l: number,
    b7h: number,
    b8l: number,
    b8h: number,
    b9l: number,
    b9h: number,
    b10l: number,
    b10h: number,
    b11l: number,
    b11h: number,
    b12l: number,
    b12h: number,
    b13l: number,
    b13h: number,
    b14l: number,
    b14h: number,
    b15l: number,
    b15h: number,
    b16l: number,
    b16h: number,
    b17l: number,
    b17h: number,
    b18l: number,
    b18h: number,
    b19l: number,
    b19h: number,
    b20l: number,
    b20h: number,
    b21l: number,
    b21h: number,
    b22l: number,
    b22h: number,
    b23l: number,
    b23h: number,
    b24l: number,
    b24h: number;
  let c0l: number,
    c0h: number,
    c1l: number,
    c1h: number,
    c2l: number,
    c2h: number,
    c3l: number,
    c3h: number,
    c4l: number,
    c4h: number,
    dl: number,
    dh: number;
  for (let round = 0; round < 48; round += 2) {
    c0l = a0l ^ a5l ^ a10l ^ a15l ^ a20l;
    c0h = a0h ^ a5h ^ a10h ^ a15h ^ a20h;
    c1l = a1l ^ a6l ^ a11l ^ a16l ^ a21l;
    c1h = a1h ^ a6h ^ a11h ^ a16h ^ a21h;
    c2l = a2l ^ a7l ^ a12l ^ a17l ^ a22l;
    c2h = a2h ^ a7h ^ a12h ^ a17h ^ a22h;
    c3l = a3l ^ a8l ^ a13l ^ a18l ^ a23l;
    c3h = a3h ^ a8h ^ a13h ^ a18h ^ a23h;
    c4l = a4l ^ a9l ^ a14l ^ a19l ^ a24l;
    c4h = a4h ^ a9h ^ a14h ^ a19h ^ a24h;
    dl = c4l ^ ((c1l << 1) | (c1h >>> 31));
    dh = c4h ^ ((c1h << 1) | (c1l >>> 31));
    a0l ^= dl;
    a0h ^= dh;
    a5l ^= dl;
    a5h ^= dh;
    a10l ^= dl;
    a10h ^= dh;
    a15l ^= dl;
    a15h ^= dh;
    a20l ^= dl;
    a20h ^= dh;
    dl = c0l ^ ((c2l << 1) | (c2h >>> 31));
    dh = c0h ^ ((c2h << 1) | (c2l >>> 31));
    a1l ^= dl;
    a1h ^= dh;
    a6l ^= dl;
    a6h ^= dh;
    a11l ^= dl;
    a11h ^= dh;
    a16l ^= dl;
    a16h ^= dh;
    a21l ^= dl;
    a21h ^= dh;
    dl = c1l ^ ((c3l << 1) | (c3h >>> 31));
    dh = c1h ^ ((c3h << 1) | (c3l >>> 31));
    a2l ^= dl;
    a2h ^= dh;
    a7l ^= dl;
    a7h ^= dh;
    a12l ^= dl;
    a12h ^= dh;
    a17l ^= dl;
    a17h ^= dh;
    a22l ^= dl;
    a22h ^= dh;
    dl = c2l ^ ((c4l << 1) | (c4h >>> 31));
    dh = c2h ^ ((c4h << 1) | (c4l >>> 31));
    a3l ^= dl;
    a3h ^= dh;
    a8l ^= dl;
    a8h ^= dh;
    a13l ^= dl;
    a13h ^= dh;
    a18l ^= dl;
    a18h ^= dh;
    a23l ^= dl;
    a23h ^= dh;
    dl = c3l ^ ((c0l << 1) | (c0h >>> 31));
    dh = c3h ^ ((c0h << 1) | (c0l >>> 31));
    a4l ^= dl;
    a4h ^= dh;
    a9l ^= dl;
    a9h ^= dh;
    a14l ^= dl;
    a14h ^= dh;
    a19l ^= dl;
    a19h ^= dh;
    a24l ^= dl;
    a24h ^= dh;
    b0l = a0l;
    b0h = a0h;
    b16l = (a5h << 4) | (a5l >>> 28);
    b16h = (a5l << 4) | (a5h >>> 28);
    b7l = (a10l << 3) | (a10h >>> 29);
    b7h = (a10h << 3) | (a10l >>> 29);
    b23l = (a15h << 9) | (a15l >>> 23);
    b23h = (a15l << 9) | (a15h >>> 23);
    b14l = (a20l << 18) | (a20h >>> 14);
    b14h = (a20h << 18) | (a20l >>> 14);
    b10l = (a1l << 1) | (a1h >>> 31);
    b10h = (a1h << 1) | (a1l >>> 31);
    b1l = (a6h << 12) | (a6l >>> 20);
    b1h = (a6l << 12) | (a6h >>> 20);
    b17l = (a11l << 10) | (a11h >>> 22);
    b17h = (a11h << 10) | (a11l >>> 22);
    b8l = (a16h << 13) | (a16l >>> 19);
    b8h = (a16l << 13) | (a16h >>> 19);
    b24l = (a21l << 2) | (a21h >>> 30);
    b24h = (a21h << 2) | (a21l >>> 30);
    b20l = (a2h << 30) | (a2l >>> 2);
    b20h = (a2l << 30) | (a2h >>> 2);
    b11l = (a7l << 6) | (a7h >>> 26);
    b11h = (a7h << 6) | (a7l >>> 26);
    b2l = (a12h << 11) | (a12l >>> 21);
    b2h = (a12l << 11) | (a12h >>> 21);
    b18l = (a17l << 15) | (a17h >>> 17);
    b18h = (a17h << 15) | (a17l >>> 17);
    b9l = (a22h << 29) | (a22l >>> 3);
    b9h = (a22l << 29) | (a22h >>> 3);
    b5l = (a3l << 28) | (a3h >>> 4);
    b5h = (a3h << 28) | (a3l >>> 4);
    b21l = (a8h << 23) | (a8l >>> 9);
    b21h = (a8l << 23) | (a8h >>> 9);
    b12l = (a13l << 25) | (a13h >>> 7);
    b12h = (a13h << 25) | (a13l >>> 7);
    b3l = (a18l << 21) | (a18h >>> 11);
    b3h = (a18h << 21) | (a18l >>> 11);
    b19l = (a23h << 24) | (a23l >>> 8);
    b19h = (a23l << 24) | (a23h >>> 8);
    b15l = (a4l << 27) | (a4h >>> 5);
    b15h = (a4h << 27) | (a4l >>> 5);
    b6l = (a9l << 20) | (a9h >>> 12);
    b6h = (a9h << 20) | (a9l >>> 12);
    b22l = (a14h << 7) | (a14l >>> 25);
    b22h = (a14l << 7) | (a14h >>> 25);
    b13l = (a19l << 8) | (a19h >>> 24);
    b13h = (a19h << 8) | (a19l >>> 24);
    b4l = (a24l << 14) | (a24h >>> 18);
    b4h = (a24h << 14) | (a24l >>> 18);
    a0l = b0l ^ (~b1l & b2l);
    a0h = b0h ^ (~b1h & b2h);
    a1l = b1l ^ (~b2l & b3l);
    a1h = b1h ^ (~b2h & b3h);
    a2l = b2l ^ (~b3l & b4l);
    a2h = b2h ^ (~b3h & b4h);
    a3l = b3l ^ (~b4l & b0l);
    a3h = b3h ^ (~b4h & b0h);
    a4l = b4l ^ (~b0l & b1l);
    a4h = b4h ^ (~b0h & b1h);
    a5l = b5l ^ (~b6l & b7l);
    a5h = b5h ^ (~b6h & b7h);
    a6l = b6l ^ (~b7l & b8l);
    a6h = b6h ^ (~b7h & b8h);
    a7l = b7l ^ (~b8l & b9l);
    a7h = b7h ^ (~b8h & b9h);
    a8l = b8l ^ (~b9l & b5l);
    a8h = b8h ^ (~b9h & b5h);
    a9l = b9l ^ (~b5l & b6l);
    a9h = b9h ^ (~b5h & b6h);
    a10l = b10l ^ (~b11l & b12l);
    a10h = b10h ^ (~b11h & b12h);
    a11l = b11l ^ (~b12l & b13l);
    a11h = b11h ^ (~b12h & b13h);
    a12l = b12l ^ (~b13l & b14l);
    a12h = b12h ^ (~b13h & b14h);
    a13l = b13l ^ (~b14l & b10l);
    a13h = b13h ^ (~b14h & b10h);
    a14l = b14l ^ (~b10l & b11l);
    a14h = b14h ^ (~b10h & b11h);
    a15l = b15l ^ (~b16l & b17l);
    a15h = b15h ^ (~b16h & b17h);
    a16l = b16l ^ (~b17l & b18l);
    a16h = b16h ^ (~b17h & b18h);
    a17l = b17l ^ (~b18l & b19l);
    a17h = b17h ^ (~b18h & b19h);
    a18l = b18l ^ (~b19l & b15l);
    a18h = b18h ^ (~b19h & b15h);
    a19l = b19l ^ (~b15l & b16l);
    a19h = b19h ^ (~b15h & b16h);
    a20l = b20l ^ (~b21l & b22l);
    a20h = b20h ^ (~b21h & b22h);
    a21l = b21l ^ (~b22l & b23l);
    a21h = b21h ^ (~b22h & b23h);
    a22l = b22l ^ (~b23l & b24l);
    a22h = b22h ^ (~b23h & b24h);
    a23l = b23l ^ (~b24l & b20l);
    a23h = b23h ^ (~b24h & b20h);
    a24l = b24l ^ (~b20l & b21l);
    a24h = b24h ^ (~b20h & b21h);
    a0l ^= ROUND_CONSTANTS[round]!;
    a0h ^= ROUND_CONSTANTS[round + 1]!;
  }
  s[0] = a0l;
  s[1] = a0h;
  s[2] = a1l;
  s[3] = a1h;
  s[4] = a2l;
  s[5] = a2h;
  s[6] = a3l;
  s[7] = a3h;
  s[8] = a4l;
  s[9] = a4h;
  s[10] = a5l;
  s[11] = a5h;
  s[12] = a6l;
  s[13] = a6h;
  s[14] = a7l;
  s[15] = a7h;
  s[16] = a8l;
  s[17] = a8h;
  s[18] = a9l;
  s[19] = a9h;
  s[20] = a10l;
  s[21] = a10h;
  s[22] = a11l;
  s[23] = a11h;
  s[24] = a12l;
  s[25] = a12h;
  s[26] = a13l;
  s[27] = a13h;
  s[28] = a14l;
  s[29] = a14h;
  s[30] = a15l;
  s[31] = a15h;
  s[32] = a16l;
  s[33] = a16h;
  s[34] = a17l;
  s[35] = a17h;
  s[36] = a18l;
  s[37] = a18h;
  s[38] = a19l;
  s[39] = a19h;
  s[40] = a20l;
  s[41] = a20h;
  s[42] = a21l;
  s[43] = a21h;
  s[44] = a22l;
  s[45] = a22h;
  s[46] = a23l;
  s[47] = a23h;
  s[48] = a24l;
  s[49] = a24h;
}
