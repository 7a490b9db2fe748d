import { encodeFunctionData, zeroAddress, type Hex } from 'viem';
import { depositoryAbi, erc20Abi, receiverAbi } from '../abi.js';
import type { ResolvedRoute } from './resolve.js';
import type { QuoteStep } from './types.js';

/**
 * Upper bounds of the gas of the user's origin transactions on the gateway's contracts (a depository's first
 * deposit costs most), measured on the devnet and checked against real receipts by the quote tests. They
 * price the legacy `fees.gas`; the steps carry no gas fields, so the wallet estimates on the chain it sends to.
 */
export const DEPOSIT_GAS = { native: 75_000n, erc20: 100_000n, approve: 50_000n } as const;

/** The status endpoint a step item's `check` points at (the reference SDK polls it). */
export const statusEndpoint = (requestId: Hex): string => `/intents/status/v3?requestId=${requestId}`;

export interface BuildStepsParameters {
  route: ResolvedRoute;
  requestId: Hex;
  amountIn: bigint;
  /** The user's current allowance of the input token to the depository (ignored for native). */
  allowance: bigint;
  /** `explicitDeposit: false` sends native through the receiver contract (one plain payable call). */
  explicitDeposit: boolean;
}

/**
 * The steps of a quote: an `approve` step when the user's allowance to the depository is short, then the
 * `deposit` step, a call carrying the request id so the deposit is attributable:
 * - native: `Depository.depositNative(user, requestId)` with the amount as value, or with
 *   `explicitDeposit: false`, `Receiver.forward(requestId)` (forwarded straight to the solver);
 * - ERC-20: `Depository.depositErc20(user, token, amount, requestId)` (an ERC-20 always needs the explicit
 *   call: a plain transfer could not carry the id).
 *
 * The deposit item has `check` pointing at the status operation. The approve item has none: the SDK polls a
 * step's `check` after its receipt, and the status cannot move before the deposit, so a check there would
 * stall the client until it times out.
 */
export function buildSteps(params: BuildStepsParameters): QuoteStep[] {
  const { route, requestId, amountIn } = params;
  const chainId = route.origin.id;
  const token = route.currencyIn.address;
  const native = token === zeroAddress;
  const steps: QuoteStep[] = [];
  if (!native && params.allowance < amountIn) {
    steps.push({
      id: 'approve',
      action: 'Confirm transaction in your wallet',
      description: `Approve ${route.currencyIn.symbol} for the deposit`,
      kind: 'transaction',
      requestId,
      depositAddress: '',
      items: [
        {
          status: 'incomplete',
          data: {
            from: route.user,
            to: token,
            data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [route.origin.contracts.depository, amountIn] }),
            value: 0n,
            chainId,
          },
        },
      ],
    });
  }
  const deposit = native
    ? params.explicitDeposit
      ? { to: route.origin.contracts.depository, data: encodeFunctionData({ abi: depositoryAbi, functionName: 'depositNative', args: [route.user, requestId] }), value: amountIn }
      : { to: route.origin.contracts.receiver, data: encodeFunctionData({ abi: receiverAbi, functionName: 'forward', args: [requestId] }), value: amountIn }
    : {
        to: route.origin.contracts.depository,
        data: encodeFunctionData({ abi: depositoryAbi, functionName: 'depositErc20', args: [route.user, token, amountIn, requestId] }),
        value: 0n,
      };
  steps.push({
    id: 'deposit',
    action: 'Confirm transaction in your wallet',
    description: depositDescription(route),
    kind: 'transaction',
    requestId,
    depositAddress: '',
    items: [{ status: 'incomplete', data: { from: route.user, ...deposit, chainId }, check: { endpoint: statusEndpoint(requestId), method: 'GET' } }],
  });
  return steps;
}

function depositDescription(route: ResolvedRoute): string {
  const what = route.operation === 'call' ? 'run your calls' : route.operation === 'bridge' ? 'bridge' : route.operation;
  return `Depositing ${route.currencyIn.symbol} to the solver to ${what} for ${route.currencyOut.symbol} on ${route.destination.displayName}`;
}
