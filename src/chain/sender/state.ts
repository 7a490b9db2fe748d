import type { Kysely } from 'kysely';
import type { Address, LocalAccount, PublicClient } from 'viem';
import type { Logger } from '../../core/logger.js';
import { GatewayError } from '../../core/errors.js';
import { crashPoint, type CrashPoint } from '../../core/faults.js';
import type { Tables } from '../../store/tables.js';

/**
 * What the parts of one chain's transaction sender share (`src/chain/sender.ts` builds it once): the chain, the
 * signer and the storage, plus the one flag every part reads. Nonces, the send queue and the receipt waits are
 * each owned by the one part that uses them.
 */
export interface SenderState {
  readonly chainId: number;
  readonly client: PublicClient;
  /** The solver's key; transactions are signed locally. */
  readonly account: LocalAccount;
  readonly address: Address;
  /** `address` in lower case, as `outgoing_txs.signer` holds it. */
  readonly signer: string;
  readonly db: Kysely<Tables>;
  readonly log: Logger;
  /** Current time in Unix milliseconds: row timestamps and the stuck clock. */
  readonly now: () => number;
  /** The chain and the signer: the key of this sender's `outgoing_txs` rows and the first fields of its log lines. */
  readonly scope: { chainId: number; signer: string };
  /** Test only: kill the process at this step (`src/core/faults.ts`). */
  readonly crashAt: CrashPoint | undefined;
  /**
   * Told of each nonce found used by a transaction this sender did not make (a broadcast refused as `nonce too low`,
   * a recorded transaction displaced): the solver's key watch looks for who used the key (`src/chain/keyWatch.ts`).
   */
  readonly onForeignNonce: ((nonce: bigint) => void) | undefined;
  /** Set by `stop`: nothing new starts, and sleeping receipt waits end. */
  stopped: boolean;
}

export function assertRunning(state: SenderState): void {
  if (state.stopped)
    throw new GatewayError('SERVICE_UNAVAILABLE', `The transaction sender of chain ${state.chainId} is stopped`);
}

/** The crash points of a transaction's steps, for the kinds that have them (`src/core/faults.ts`). */
export function crash(state: SenderState, step: 'recorded' | 'broadcast' | 'mined', kind: string): void {
  if (kind === 'fill' || kind === 'refund' || kind === 'settle' || kind === 'claim' || kind === 'sweep')
    crashPoint(state.crashAt, `${kind}-${step}`);
  else if (kind === 'gasless' && step === 'recorded') crashPoint(state.crashAt, 'gasless-recorded');
}
