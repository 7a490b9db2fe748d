import { crashPoint } from '../faults.js';
import { claimDeposit } from './claims.js';
import { decide, standingOf } from './decide.js';
import { act, readsOf } from './execute.js';
import { startFillReads } from './fillChecks.js';
import type { SolverScope } from './scope.js';
import type { DepositRecord } from '../../records/deposit.js';
import type { RequestRecord } from '../../records/request.js';

/**
 * A confirmed deposit's walk: its standing (`standingOf`), its claim (`claims.ts`), the decision (`decide.ts`) and
 * the one executor acting on it (`execute.ts`). The request's own deposit pays for it and the request is filled or
 * refunded; a deposit on a fast-filled request is recorded on it; any other is refunded on its own (stray, double
 * spend, unknown request).
 */
export async function processDeposit(
  scope: SolverScope,
  deposit: DepositRecord,
  handed?: RequestRecord,
): Promise<void> {
  const { ctx } = scope;
  // `handed`: the request as the deposit's confirmation read it. Nothing before the claim relies on its status
  // (`judgeDeposit` reads only the order, which a request never changes; the claim checks the status in its own
  // statement), so it spares this read. Without it, read with the other deposits handed on with it (one statement).
  const request = handed ?? (await scope.readRequest(deposit.requestId));
  const standing = standingOf(request, deposit, ctx.solver.address);
  // A deposit that pays: the fill's check reads (balance, simulation, fee caps) start now, from this record, and run
  // while it is claimed; the decision uses them only if the claimed row asks for the same fill (`fillChecks.ts`).
  const early = request !== undefined && standing.verdict?.kind === 'pays' ? startFillReads(scope, request) : undefined;
  const claim = await claimDeposit(scope, request, deposit, standing.verdict);
  // The claim returns the request as its move left it (`pending`): the decision starts from that row, with no
  // second read.
  if (claim.kind === 'claimed') ctx.metrics?.statusChanged('pending', null);
  if (claim.kind !== 'taken' && claim.kind !== 'fastFill') crashPoint(ctx.config.crashAt, 'deposit-claimed');
  const facts = { request, handed: handed !== undefined, standing, early };
  await act(scope, deposit, await decide(request, deposit, readsOf(scope, deposit, claim, facts)));
}
