import {
  encodeAbiParameters,
  getContractAddress,
  keccak256,
  parseAbiParameters,
  toHex,
  type Address,
  type Hex,
} from 'viem';
import { zeroAddress } from 'viem';

/**
 * The address math of `DepositAddressFactory` (contracts/DepositAddressFactory.sol), in TypeScript so a quote
 * needs no RPC call: the factory's implementation is its first `CREATE` (nonce 1), and an address is the
 * CREATE2 address of the EIP-1167 clone of it, salted by `keccak256(abi.encode(key, recoveryAddress))`.
 */
export function implementationOf(factory: Address): Address {
  return getContractAddress({ opcode: 'CREATE', from: factory, nonce: 1n });
}

export function cloneInitCode(implementation: Address): Hex {
  return `0x3d602d80600a3d3981f3363d3d373d3d3d363d73${implementation.slice(2).toLowerCase()}5af43d82803e903d91602b57fd5bf3`;
}

export function saltOf(key: Hex, recoveryAddress: Address | null): Hex {
  return keccak256(encodeAbiParameters(parseAbiParameters('bytes32, address'), [key, recoveryAddress ?? zeroAddress]));
}

export function computeDepositAddress(factory: Address, key: Hex, recoveryAddress: Address | null): Address {
  return getContractAddress({
    opcode: 'CREATE2',
    from: factory,
    salt: saltOf(key, recoveryAddress),
    bytecode: cloneInitCode(implementationOf(factory)),
  });
}

/** The route and parties an open address is reused for; its key is their hash. */
export interface OpenAddressTerms {
  originChainId: number;
  originCurrency: Address;
  destinationChainId: number;
  destinationCurrency: Address;
  recipient: Address;
  refundTo: Address | null;
  /** Terms of the re-quotes that the address's transfers get (the first quote's). */
  slippageTolerance: string | null;
  referrer: string | null;
  appFees: Array<{ recipient: string; fee: string }>;
}

export function openAddressKey(terms: OpenAddressTerms): Hex {
  const canonical = JSON.stringify({
    kind: 'open-deposit-address/v1',
    originChainId: terms.originChainId,
    originCurrency: terms.originCurrency.toLowerCase(),
    destinationChainId: terms.destinationChainId,
    destinationCurrency: terms.destinationCurrency.toLowerCase(),
    recipient: terms.recipient.toLowerCase(),
    refundTo: terms.refundTo?.toLowerCase() ?? null,
    slippageTolerance: terms.slippageTolerance,
    referrer: terms.referrer,
    appFees: terms.appFees.map((fee) => ({ recipient: fee.recipient.toLowerCase(), fee: fee.fee })),
  });
  return keccak256(toHex(canonical));
}

/** The factory's sweep id of one transfer: once per (chain, transaction, log). */
export function sweepIdOf(chainId: number, txHash: string, logIndex: number): Hex {
  return keccak256(
    encodeAbiParameters(parseAbiParameters('string, uint256, bytes32, int256'), [
      'deposit-address-sweep',
      BigInt(chainId),
      txHash as Hex,
      BigInt(logIndex),
    ]),
  );
}

/** The id a transfer that pays no request is deposited under (an orphan: refunded to its depositor). */
export function refundOnlyIdOf(sweepId: Hex): Hex {
  return keccak256(encodeAbiParameters(parseAbiParameters('string, bytes32'), ['deposit-address-refund', sweepId]));
}
