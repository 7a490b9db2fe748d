import { listHeldOutgoingTxNonces } from '../../store/outgoingTxs.repository.js';
import { rpcFailure } from './broadcast.js';
import type { SenderState } from './state.js';

/**
 * The signer's nonces on one chain, as the send queue hands them out. Used only inside the queue (one turn at a
 * time), so the cached next nonce is never handed out twice.
 */
export interface NonceAllocator {
  /** The next nonce to hand out: the one after the last recorded, or `fresh()` when none is cached. */
  next(): Promise<bigint>;
  /**
   * The lowest nonce from the chain's pending count up that no live recorded transaction holds: never a live
   * nonce, and a nonce released below recorded ones is handed out again rather than left as a gap (the rows above
   * it could not be mined until it is used). Usually that is the highest recorded + 1, or the pending count.
   */
  fresh(): Promise<bigint>;
  /** Rows are recorded up to `nonce - 1`: `nonce` is the next. */
  setNext(nonce: bigint): void;
  /** Forgets the cached nonce: the next is read from the chain and the table again. */
  forget(): void;
  /** A row's nonce was released (a node refused its only version): forgets the cached nonce and remembers it. */
  release(nonce: bigint): void;
  /** The nonce `release` gave back since `clearReleased` (a batch re-signs the rows after it one nonce down). */
  lastReleased(): bigint | undefined;
  clearReleased(): void;
}

export function createNonceAllocator(state: SenderState): NonceAllocator {
  const { client, address, db, scope } = state;
  /** The next nonce to hand out; undefined = read it again from the chain and the database. */
  let nextNonce: bigint | undefined;
  /** The nonce `release` gave back last. */
  let released: bigint | undefined;

  async function fresh(): Promise<bigint> {
    const pending = await client.getTransactionCount({ address, blockTag: 'pending' }).catch((error: unknown) => {
      throw rpcFailure(state, 'reading the pending nonce', error);
    });
    let nonce = BigInt(pending);
    for (const held of await listHeldOutgoingTxNonces(db, scope, nonce)) {
      if (held !== nonce) break;
      nonce += 1n;
    }
    return nonce;
  }

  return {
    next: async () => nextNonce ?? (await fresh()),
    fresh,
    setNext(nonce) {
      nextNonce = nonce;
    },
    forget() {
      nextNonce = undefined;
    },
    release(nonce) {
      nextNonce = undefined;
      released = nonce;
    },
    lastReleased: () => released,
    clearReleased() {
      released = undefined;
    },
  };
}
