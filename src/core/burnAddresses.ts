import type { Address } from 'viem';
import { GatewayError } from './errors.js';

/**
 * Addresses nobody can spend from: value sent there is gone for good. A quote refuses them as `recipient`,
 * `refundTo` and app-fee recipient (`INVALID_RECIPIENT`), because the gateway would otherwise fill, refund or pay a
 * fee to them and report success. (As a *currency*, the zero address means the native currency and stays valid.)
 *
 * The list, decided and kept short on purpose:
 * - the low range `0x0000…0000` to `0x0000…ffff`: the zero address, the EVM precompiles (`0x…01` to `0x…11`,
 *   P-256 at `0x…0100`) and the addresses people type as placeholders (`0x…0001`); no private key for any of
 *   them can be found (that takes about 2^144 tries);
 * - `0x000000000000000000000000000000000000dEaD`, the conventional burn address;
 * - `0xdEAD000000000000000042069420694206942069`, the other widely used burn address.
 */
const BURN_ADDRESSES: readonly Address[] = [
  '0x000000000000000000000000000000000000dEaD',
  '0xdEAD000000000000000042069420694206942069',
];

/** Upper end (exclusive) of the keyless low range; see {@link BURN_ADDRESSES}. */
const LOW_RANGE_END = 0x1_0000n;

/** Whether value sent to `address` can never be spent again (see {@link BURN_ADDRESSES}). */
function isBurnAddress(address: Address): boolean {
  if (BigInt(address) < LOW_RANGE_END) return true;
  const lower = address.toLowerCase();
  return BURN_ADDRESSES.some((burn) => burn.toLowerCase() === lower);
}

/**
 * Throws `INVALID_RECIPIENT` (errorData: the field) when `address`, the value of `field`, is a burn address.
 * `note` says where the value came from when the client did not set the field itself (e.g. "defaults to user").
 */
export function refuseBurnAddress(address: Address, field: string, note?: string): void {
  if (!isBurnAddress(address)) return;
  const named = note === undefined ? field : `${field} (${note})`;
  const zeroRefund =
    field === 'refundTo' && BigInt(address) === 0n
      ? '; the zero address as refundTo (refund to the depositor of a deposit address) needs deposit addresses, which this gateway does not offer yet'
      : '';
  throw new GatewayError(
    'INVALID_RECIPIENT',
    `${named} ${address} is a burn address: nobody can spend what is sent there, so the gateway will not send funds to it${zeroRefund}`,
    { data: field },
  );
}
