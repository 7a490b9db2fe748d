import { BaseError, decodeErrorResult, isHex, sliceHex, type Abi, type Hex } from 'viem';
import { batchExecutorAbi, knownErrorsAbi } from '../abi.js';

/** A decoded revert, in the reference's `details.revert` shape (api-facts §6.2). */
export interface DecodedRevert {
  type: 'errorString' | 'panic' | 'customError' | 'unknownCustomError' | 'empty';
  /** Stable label: the custom error's name in upper snake case, `EXECUTION_REVERTED`, `PANIC`, or `UNKNOWN_CUSTOM_ERROR_<selector>`. */
  label: string;
  message: string;
  selector?: Hex;
  name?: string;
  args?: Record<string, string>;
  rawArgsHex?: Hex;
}

const errorsAbi: Abi = [
  ...batchExecutorAbi.filter((item) => item.type === 'error'),
  ...knownErrorsAbi,
  { type: 'error', name: 'Error', inputs: [{ name: 'message', type: 'string' }] },
  { type: 'error', name: 'Panic', inputs: [{ name: 'code', type: 'uint256' }] },
];

const upperSnake = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Decodes revert data: `Error(string)`, `Panic(uint256)`, the gateway's and the executor's custom errors. */
export function decodeRevert(data: Hex | undefined): DecodedRevert {
  if (data === undefined || data === '0x' || data.length < 10) {
    return { type: 'empty', label: 'EXECUTION_REVERTED', message: 'The call reverted without a reason' };
  }
  const selector = sliceHex(data, 0, 4);
  try {
    const decoded = decodeErrorResult({ abi: errorsAbi, data });
    const abiItem = decoded.abiItem as { inputs: ReadonlyArray<{ name?: string }> };
    const values = decoded.args ?? [];
    const args = Object.fromEntries(values.map((value, i) => [abiItem.inputs[i]?.name || String(i), String(value)]));
    if (decoded.errorName === 'Error') {
      return { type: 'errorString', label: 'EXECUTION_REVERTED', message: String(values[0]), selector, args };
    }
    if (decoded.errorName === 'Panic') {
      return { type: 'panic', label: 'PANIC', message: `Panic ${String(values[0])}`, selector, args };
    }
    const rendered = Object.entries(args)
      .map(([key, value]) => `${key}=${value}`)
      .join(', ');
    return {
      type: 'customError',
      label: upperSnake(decoded.errorName),
      message: `${decoded.errorName}(${rendered})`,
      selector,
      name: decoded.errorName,
      args,
    };
  } catch {
    return {
      type: 'unknownCustomError',
      label: `UNKNOWN_CUSTOM_ERROR_${selector}`,
      message: `The call reverted with unknown error ${selector}`,
      selector,
      rawArgsHex: data.length > 10 ? `0x${data.slice(10)}` : '0x',
    };
  }
}

/** The revert data a node returned, anywhere in viem's error chain (`raw` or `data`); undefined when none. */
export function revertDataOf(error: unknown): Hex | undefined {
  if (!(error instanceof BaseError)) return undefined;
  let found: Hex | undefined;
  error.walk((e) => {
    const { raw, data } = e as { raw?: unknown; data?: unknown };
    found = isHex(raw) ? raw : isHex(data) ? data : undefined;
    return found !== undefined;
  });
  return found;
}
