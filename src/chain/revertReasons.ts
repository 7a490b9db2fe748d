import { BaseError, ExecutionRevertedError, InsufficientFundsError, decodeErrorResult, type Abi, type Hex } from 'viem';
import * as contracts from '../../generated/contracts/index.js';
import { revertDataOf } from '../core/gasless/decodeRevert.js';

/**
 * Revert reasons as a person reads them, decoded with the ABIs of every contract of the gateway (custom errors such
 * as the depository's `AlreadyReleased(7)`, `Error(string)`, `Panic`), never the raw bytes read as text. Estimates,
 * reads and the sender's simulations word their failures with it.
 */

/** Why a simulated or sent transaction failed: its revert decoded (`describeRevert`), else the node's words. */
export function describeExecutionFailure(error: BaseError): string {
  const data = revertDataOf(error);
  if (data !== undefined && data !== '0x') return describeRevert(data);
  const node = error.walk(isExecutionFailure);
  return node instanceof BaseError ? node.shortMessage : error.shortMessage;
}

/** Node errors caused by the transaction itself: a revert, or a value the sender cannot pay. */
export const isExecutionFailure = (error: unknown): boolean =>
  error instanceof ExecutionRevertedError || error instanceof InsufficientFundsError;

/** Every custom error of our contracts: inner reverts bubble up through the multicallers unchanged. */
type AbiError = Extract<Abi[number], { type: 'error' }>;
const knownErrors: readonly AbiError[] = [
  ...new Map(
    (Object.values(contracts) as unknown[])
      .filter((value): value is Abi => Array.isArray(value))
      .flat()
      .filter((item): item is AbiError => item.type === 'error')
      .map((item) => [`${item.name}(${item.inputs.map((input) => input.type).join(',')})`, item] as const),
  ).values(),
];

/** `Unauthorized(0x…)`, an `Error(string)` reason, `Panic(0x11)`, or the raw hex when no known error matches. */
export function describeRevert(data: Hex): string {
  if (data === '0x') return 'no reason';
  try {
    const { errorName, args = [] } = decodeErrorResult({ abi: knownErrors, data });
    if (errorName === 'Error' && typeof args[0] === 'string') return args[0];
    if (errorName === 'Panic' && typeof args[0] === 'bigint') return `Panic(0x${args[0].toString(16)})`;
    return `${errorName}(${args.map(formatArg).join(', ')})`;
  } catch {
    return data;
  }
}

function formatArg(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(formatArg).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    return JSON.stringify(value, (_key, inner: unknown) => (typeof inner === 'bigint' ? inner.toString() : inner));
  }
  return String(value);
}
