import { BaseError, ExecutionRevertedError } from 'viem';
import { GatewayError } from '../../core/errors.js';
import { withGasMargin } from '../../core/gasMargin.js';
import type { SendParameters } from '../../core/ports/solver.js';
import { describeExecutionFailure } from '../revertReasons.js';
import { mayHaveReachedNode } from '../rpcErrors.js';
import { messageOf, rpcFailure, toViemAuthorization } from './broadcast.js';
import type { Fees } from './payload.js';
import type { SenderState } from './state.js';

/** The gas of `tx` simulated as it is sent: from the signer, with the fee caps it carries (`tx.gasprice` is real). */
export async function estimateGas(state: SenderState, tx: SendParameters, fees: Fees): Promise<bigint> {
  const { chainId, client, address } = state;
  try {
    const estimate = await client.estimateGas({
      account: address,
      to: tx.to,
      data: tx.data,
      value: tx.value,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      ...(tx.authorizationList === undefined
        ? {}
        : { authorizationList: tx.authorizationList.map(toViemAuthorization) }),
    });
    return withGasMargin(estimate);
  } catch (error) {
    const reverted = error instanceof BaseError && error.walk((e) => e instanceof ExecutionRevertedError) !== null;
    if (!reverted && mayHaveReachedNode(error)) throw rpcFailure(state, 'estimating gas', error);
    // A revert is worded with the contracts' ABIs (`AlreadyReleased(7)`), not its bytes read as text.
    const reason = error instanceof BaseError && reverted ? describeExecutionFailure(error) : messageOf(error);
    throw new GatewayError(
      'DESTINATION_TX_FAILED',
      `Chain ${chainId}: the ${tx.kind} transaction would fail: ${reason}`,
      {
        cause: error,
      },
    );
  }
}
