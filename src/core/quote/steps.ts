import { getAbiItem, maxUint256, toFunctionSelector, zeroAddress, type Abi, type Address, type Hex } from 'viem';
import { depositoryAbi, erc20Abi, receiverAbi } from '../abi.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import { permitTypedData, type StoredPermit } from '../permits/typedData.js';
import type { QuoteStep } from './types.js';

/**
 * Upper bounds of the gas of the user's origin transactions on the gateway's contracts (a depository's first
 * deposit costs most), measured on the devnet and checked against real receipts by the quote tests. They
 * price the legacy `fees.gas`; the steps carry no gas fields, so the wallet estimates on the chain it sends to.
 */
export const DEPOSIT_GAS = { native: 75_000n, erc20: 100_000n, approve: 50_000n } as const;

const selectorOf = (abi: Abi, name: string): string =>
  toFunctionSelector(getAbiItem({ abi, name }) as Parameters<typeof toFunctionSelector>[0]);
/** The step calls' selectors, from the contracts' ABIs once at load. */
const SELECTORS = {
  approve: selectorOf(erc20Abi, 'approve'),
  transfer: selectorOf(erc20Abi, 'transfer'),
  depositNative: selectorOf(depositoryAbi, 'depositNative'),
  depositErc20: selectorOf(depositoryAbi, 'depositErc20'),
  forward: selectorOf(receiverAbi, 'forward'),
} as const;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/** One ABI word of a static argument, as 64 hex digits (lower case, as viem encodes). */
function word(value: Address | bigint, type: 'address' | 'bytes32' | 'uint256'): string {
  if (type === 'uint256') {
    if (typeof value !== 'bigint' || value < 0n || value > maxUint256)
      throw new RangeError(`${String(value)} is not a uint256`);
    return value.toString(16).padStart(64, '0');
  }
  const pattern = type === 'address' ? ADDRESS : BYTES32;
  if (typeof value !== 'string' || !pattern.test(value)) throw new TypeError(`${String(value)} is not an ${type}`);
  return value.slice(2).toLowerCase().padStart(64, '0');
}

/**
 * The calldata of a step's call: every argument is static, so the encoding is the selector and one word per
 * argument. Written out because a quote builds one or two of them on every request, and the generic encoder
 * looks the function up in the ABI each time (checked byte for byte against viem in `test/core/quote/steps.test.ts`).
 */
export const stepCalldata = {
  approve: (spender: Address, amount: bigint): Hex =>
    `${SELECTORS.approve}${word(spender, 'address')}${word(amount, 'uint256')}` as Hex,
  depositNative: (depositor: Address, requestId: Hex): Hex =>
    `${SELECTORS.depositNative}${word(depositor, 'address')}${word(requestId, 'bytes32')}` as Hex,
  depositErc20: (depositor: Address, token: Address, amount: bigint, requestId: Hex): Hex =>
    `${SELECTORS.depositErc20}${word(depositor, 'address')}${word(token, 'address')}${word(amount, 'uint256')}${word(requestId, 'bytes32')}` as Hex,
  forward: (requestId: Hex): Hex => `${SELECTORS.forward}${word(requestId, 'bytes32')}` as Hex,
  transfer: (to: Address, amount: bigint): Hex =>
    `${SELECTORS.transfer}${word(to, 'address')}${word(amount, 'uint256')}` as Hex,
};

/** The status endpoint a step item's `check` points at (the reference SDK polls it). */
const statusEndpoint = (requestId: Hex): string => `/intents/status/v3?requestId=${requestId}`;

export interface BuildStepsParameters {
  route: ResolvedRoute;
  requestId: Hex;
  amountIn: bigint;
  /** The user's current allowance of the input token to the depository (ignored for native). */
  allowance: bigint;
  /** `explicitDeposit: false` sends native through the receiver contract (one plain payable call). */
  explicitDeposit: boolean;
  /** A deposit address: the deposit is a plain transfer to it (native value, or an ERC-20 `transfer`). */
  depositAddress?: Address | null;
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
/** The `approve` step: the user's ERC-20 `approve(spender, amount)`, sent before the step that spends it. */
export function approveStep(params: {
  description: string;
  requestId: Hex;
  from: Address;
  token: Address;
  spender: Address;
  amount: bigint;
  chainId: number;
}): QuoteStep {
  return {
    id: 'approve',
    action: 'Confirm transaction in your wallet',
    description: params.description,
    kind: 'transaction',
    requestId: params.requestId,
    depositAddress: '',
    items: [
      {
        status: 'incomplete',
        data: {
          from: params.from,
          to: params.token,
          data: stepCalldata.approve(params.spender, params.amount),
          value: 0n,
          chainId: params.chainId,
        },
      },
    ],
  };
}

export function buildSteps(params: BuildStepsParameters): QuoteStep[] {
  const { route, requestId, amountIn } = params;
  const chainId = route.origin.id;
  const token = route.currencyIn.address;
  const native = token === zeroAddress;
  const steps: QuoteStep[] = [];
  const depositAddress = params.depositAddress ?? null;
  if (depositAddress !== null) {
    const transfer = native
      ? { to: depositAddress, data: '0x' as Hex, value: amountIn }
      : { to: token, data: stepCalldata.transfer(depositAddress, amountIn), value: 0n };
    return [
      {
        id: 'deposit',
        action: 'Send the deposit to the deposit address',
        description: `Send ${route.currencyIn.symbol} to the deposit address ${depositAddress} with a plain transfer (from any wallet or exchange) to ${depositAction(route)} for ${route.currencyOut.symbol} on ${route.destination.displayName}`,
        kind: 'transaction',
        requestId,
        depositAddress,
        items: [
          {
            status: 'incomplete',
            data: { from: route.user, ...transfer, chainId },
            check: { endpoint: statusEndpoint(requestId), method: 'GET' },
          },
        ],
      },
    ];
  }
  if (!native && params.allowance < amountIn) {
    steps.push(
      approveStep({
        description: `Approve ${route.currencyIn.symbol} for the deposit`,
        requestId,
        from: route.user,
        token,
        spender: route.origin.contracts.depository,
        amount: amountIn,
        chainId,
      }),
    );
  }
  const deposit = native
    ? params.explicitDeposit
      ? {
          to: route.origin.contracts.depository,
          data: stepCalldata.depositNative(route.user, requestId),
          value: amountIn,
        }
      : { to: route.origin.contracts.receiver, data: stepCalldata.forward(requestId), value: amountIn }
    : {
        to: route.origin.contracts.depository,
        data: stepCalldata.depositErc20(route.user, token, amountIn, requestId),
        value: 0n,
      };
  steps.push({
    id: 'deposit',
    action: 'Confirm transaction in your wallet',
    description: depositDescription(route),
    kind: 'transaction',
    requestId,
    depositAddress: '',
    items: [
      {
        status: 'incomplete',
        data: { from: route.user, ...deposit, chainId },
        check: { endpoint: statusEndpoint(requestId), method: 'GET' },
      },
    ],
  });
  return steps;
}

function depositAction(route: ResolvedRoute): string {
  return route.operation === 'call' ? 'run your calls' : route.operation === 'bridge' ? 'bridge' : route.operation;
}

function depositDescription(route: ResolvedRoute): string {
  const what = depositAction(route);
  return `Depositing ${route.currencyIn.symbol} to the solver to ${what} for ${route.currencyOut.symbol} on ${route.destination.displayName}`;
}

export interface BuildPermitStepsParameters {
  route: ResolvedRoute;
  requestId: Hex;
  permit: StoredPermit;
}

/**
 * The one step of a `usePermit` quote: an `authorize1` signature (EIP-712) of the stored permit, posted to
 * `POST /execute/permits` with `{ kind, requestId, api }` (the SDK adds `?signature=`), after which the gateway
 * sends the deposit; its `check` polls the status until the fill. No transaction for the user, so no gas.
 */
export function buildPermitSteps({ route, requestId, permit }: BuildPermitStepsParameters): QuoteStep[] {
  const typed = permitTypedData(permit);
  return [
    {
      id: 'authorize1',
      action: 'Sign authorization',
      description: `Authorize the deposit of ${route.currencyIn.symbol} to ${route.operation === 'bridge' ? 'bridge' : route.operation} for ${route.currencyOut.symbol} on ${route.destination.displayName}; the gateway pays the gas`,
      kind: 'signature',
      requestId,
      depositAddress: '',
      items: [
        {
          status: 'incomplete',
          data: {
            sign: {
              signatureKind: 'eip712',
              domain: typed.domain,
              types: typed.types,
              primaryType: typed.primaryType,
              value: typed.message as unknown as Record<string, Address | bigint>,
            },
            post: {
              endpoint: '/execute/permits',
              method: 'POST',
              body: { kind: permit.kind, requestId, api: route.operation === 'bridge' ? 'bridge' : 'swap' },
            },
          },
          check: { endpoint: statusEndpoint(requestId), method: 'GET' },
        },
      ],
    },
  ];
}
