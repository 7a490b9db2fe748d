import { decodeFunctionData, getAddress, isAddressEqual, type Address, type Hex } from 'viem';
import { approvalProxyAbi, depositAddressFactoryAbi } from '../../../generated/contracts/index.js';
import type { Kysely } from 'kysely';
import type { DepositRecord } from '../../records/deposit.js';
import { findOutgoingTxsByHashes } from '../../store/outgoingTxs.repository.js';
import type { RequestRecord } from '../../records/request.js';
import { getRequest } from '../../store/requests.repository.js';
import type { Tables } from '../../store/tables.js';
import type { ChainConfig } from '../chains/types.js';
import { computeDepositAddress } from '../vocabulary/depositAddress.js';

/**
 * What a transaction the solver itself sent was, read from the chain (its target and calldata), for each deposit it
 * carried: the solver's address as a deposit's sender says nothing about whose money it is, because the solver also
 * sends fills, call quotes' `txs` and gasless batches, whose calls anyone can shape to deposit under any request id.
 *
 * - `sweep:<deposit address>`: `DepositAddressFactory.sweep` on the chain's factory (only the solver may call it); the
 *   address is the one the factory computes from the call's key and recovery address, so it is the address the
 *   funds left.
 * - `permit:<owner>`: `ApprovalProxy.depositWithPermit` / `depositWithAuthorization` (only the solver may call
 *   them); the owner's signed permit is what moved the funds.
 * - `call:<target>`: anything else (a fill through the multicaller, a refund, a gasless batch, whose target is the
 *   batch's user account).
 */
export function solverCarrierOf(chain: ChainConfig, tx: { to: Address | null; input: Hex }): string {
  const to = tx.to ?? '0x0000000000000000000000000000000000000000';
  const factory = chain.contracts.depositAddressFactory;
  if (factory !== undefined && isAddressEqual(to, factory)) {
    try {
      const call = decodeFunctionData({ abi: depositAddressFactoryAbi, data: tx.input });
      if (call.functionName === 'sweep') {
        const [key, recoveryAddress] = call.args;
        const address = computeDepositAddress(factory, key, isZero(recoveryAddress) ? null : recoveryAddress);
        return `sweep:${address.toLowerCase()}`;
      }
    } catch {
      // Not a call the factory knows: a call like any other.
    }
  }
  if (isAddressEqual(to, chain.contracts.approvalProxy)) {
    try {
      const call = decodeFunctionData({ abi: approvalProxyAbi, data: tx.input });
      if (call.functionName === 'depositWithPermit' || call.functionName === 'depositWithAuthorization')
        return `permit:${call.args[2].toLowerCase()}`;
    } catch {
      // As above.
    }
  }
  return `call:${getAddress(to).toLowerCase()}`;
}

/**
 * Whose money a deposit is to the request whose id it carries (`docs/security.md`, "The solver's decision"):
 *
 * - `sender`: not sent by the solver: the transaction's sender, as the chain says (`judgeDeposit` compares it with
 *   the order's user).
 * - `user`: sent by the solver, and positively the order user's own: a sweep of the request's own deposit address
 *   (the request's `depositAddress`; swept on another chain it is then `other-chain`), the user's own permit, or a gasless batch run at the
 *   user's own account (the transaction's target is the user).
 * - `in-solver-transaction`: any other deposit the solver's transactions carried (nested in a fill, a call quote's
 *   calls, another user's gasless batch, a sweep of another address; or recorded before carriers were): it is matched
 *   to no request, whatever its amount, and is refunded on its own.
 */
export function depositOwner(
  request: RequestRecord,
  deposit: DepositRecord,
  solverAddress: string,
): 'sender' | 'user' | 'in-solver-transaction' {
  if (deposit.sender === null || deposit.sender.toLowerCase() !== solverAddress.toLowerCase()) return 'sender';
  const carrier = deposit.carrier;
  if (carrier === null) return 'in-solver-transaction';
  const user = request.user.toLowerCase();
  if (carrier.startsWith('sweep:'))
    return request.depositAddress !== null && carrier === `sweep:${request.depositAddress.toLowerCase()}`
      ? 'user'
      : 'in-solver-transaction';
  if (carrier === `permit:${user}` || carrier === `call:${user}`) return 'user';
  return 'in-solver-transaction';
}

/**
 * Where an `in-solver-transaction` deposit is refunded. The depositor it names, unless that is the gateway's own
 * (the solver, or one of the chain's contracts: a deposit forwarded by the multicaller inside a fill names the
 * multicaller, whose balance anyone's calls can sweep): then the requester of the solver's transaction that carried
 * it (that request's `refundTo`), whose calls made the deposit. Null when that transaction is not the solver's
 * record of any request: the deposit is held for the operator.
 */
export async function solverCarriedRefundTarget(
  db: Kysely<Tables>,
  chain: ChainConfig,
  solverAddress: string,
  deposit: DepositRecord,
): Promise<Address | null> {
  const gateway = [solverAddress, ...(Object.values(chain.contracts) as unknown[])].filter(
    (address): address is string => typeof address === 'string',
  );
  if (!gateway.some((address) => address.toLowerCase() === deposit.depositor.toLowerCase()))
    return getAddress(deposit.depositor);
  const carrier = (await findOutgoingTxsByHashes(db, [deposit.txHash])).get(deposit.txHash.toLowerCase());
  const requester = carrier === undefined ? undefined : await getRequest(db, carrier.requestId);
  return requester === undefined ? null : getAddress(requester.refundTo);
}

const isZero = (address: Address): boolean => /^0x0{40}$/i.test(address);
