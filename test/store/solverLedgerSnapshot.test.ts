/**
 * What the reconciler reads of the database for one chain (`readSolverLedgerSnapshot`): a fill mined (its receipt
 * recorded) counts as unfinished while its request can still move to `success` (the statuses the core names), and
 * no longer once it has moved there or failed.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { statusMoves } from '../../src/core/vocabulary/statusMachine.js';
import { insertOutgoingTx } from '../../src/store/outgoingTxs.repository.js';
import { readSolverLedgerSnapshot } from '../../src/store/reconciliations.repository.js';
import { insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import type { RequestStatus } from '../../src/records/requestStatus.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { newRequest } from './requestFixture.js';

const signer = '0x9999999999999999999999999999999999999999';

describe.each(testDatabaseKinds)('the solver ledger snapshot (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(() => truncateAll(database()));

  /** A request moved to `status` whose fill on 31338 is mined (`confirmed`). */
  const minedFill = async (status: RequestStatus, nonce: bigint) => {
    const { db } = database();
    const request = await insertRequest(db, newRequest());
    await updateRequestStatus(db, request.id, { status, now: 2 });
    await insertOutgoingTx(db, {
      chainId: 31338,
      requestId: request.id,
      kind: 'fill',
      signer,
      nonce,
      status: 'confirmed',
      payload: {},
      now: 3,
    });
  };

  it('counts a mined fill as unfinished only while its request can still move to success', async () => {
    const read = () =>
      readSolverLedgerSnapshot(database().db, { chainId: 31338, signer, awaitingSuccess: statusMoves.succeed.from });
    expect((await read()).unfinishedFills).toBe(0);
    await minedFill('pending', 0n);
    await minedFill('submitted', 1n);
    expect((await read()).unfinishedFills).toBe(2);
    await minedFill('success', 2n);
    await minedFill('failure', 3n);
    expect((await read()).unfinishedFills).toBe(2);
    expect(
      (await readSolverLedgerSnapshot(database().db, { chainId: 31337, signer, awaitingSuccess: ['pending'] }))
        .unfinishedFills,
    ).toBe(0);
  });
});
