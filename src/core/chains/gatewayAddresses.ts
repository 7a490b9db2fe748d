import type { Address } from 'viem';
import { GatewayError } from '../errors.js';
import type { CoreConfig } from './types.js';

/** What the refusal reads of the context: the solver's address and the configured chains' contracts. */
type Configured = { config: Pick<CoreConfig, 'solverAddress' | 'chains'> };

/** The gateway's own accounts: the solver's address and every contract of every configured chain (lower case). */
function gatewayAddresses(ctx: Configured): Set<string> {
  const own = new Set<string>([ctx.config.solverAddress.toLowerCase()]);
  for (const chain of ctx.config.chains) {
    for (const contract of Object.values(chain.contracts)) {
      if (typeof contract === 'string') own.add(contract.toLowerCase());
    }
  }
  return own;
}

/**
 * Refuses the gateway's own accounts (the solver's address, a gateway contract on any chain) where a client names
 * whose money it is or where money goes (`user`, `recipient`, `refundTo`, an app-fee or claim recipient): the
 * solver would pay itself, or send funds into a contract that only the solver's own bookkeeping may move, and
 * deposits from the solver would count as a customer's.
 *
 * @throws `INVALID_RECIPIENT` (400) for a recipient, `INVALID_ADDRESS` (400) for `user`; the field in `errorData`.
 */
export function refuseGatewayAddress(ctx: Configured, address: Address, field: string, note?: string): void {
  if (!gatewayAddresses(ctx).has(address.toLowerCase())) return;
  const named = note === undefined ? field : `${field} (${note})`;
  throw new GatewayError(
    field === 'user' ? 'INVALID_ADDRESS' : 'INVALID_RECIPIENT',
    `${named} ${address} is one of the gateway's own accounts (its solver or one of its contracts); use your own address`,
    { data: field },
  );
}
