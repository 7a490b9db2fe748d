import type { Address } from 'viem';
import { hasFailedPermitSince } from '../../store/permits.repository.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { defaultPermitSettings } from './settings.js';

/**
 * Refuses the permits of a user one of whose permit deposits reverted on chain within the cooldown
 * (`GATEWAY_PERMIT_REVERT_COOLDOWN_SECONDS`): the gateway paid that deposit's gas and the user nothing (a reverted
 * permit moves none of their funds, so there is nothing to charge it to), and a user can make a deposit revert
 * after its clean simulation (by moving the funds or using the nonce first). The bar bounds what one user can make
 * the solver pay to one reverted deposit per cooldown; a deposit transaction (without `usePermit`), paid by the
 * user, stays open. At a quote it is `INVALID_INPUT` on `usePermit`; at submission `PERMIT_FAILED` `RECENT_REVERT`,
 * before anything is sent.
 */
export async function checkNoRecentPermitRevert(
  ctx: Pick<CoreContext, 'db' | 'now' | 'config'>,
  owner: Address,
  at: 'quote' | 'submission',
): Promise<void> {
  const cooldownSeconds = (ctx.config.permits ?? defaultPermitSettings).revertCooldownSeconds;
  if (cooldownSeconds === 0) return;
  if (!(await hasFailedPermitSince(ctx.db, owner, ctx.now() - cooldownSeconds * 1000))) return;
  const why =
    `a permit deposit of ${owner} reverted on chain less than ${cooldownSeconds} s ago; its permits are refused ` +
    'for that long (a deposit transaction is not)';
  throw at === 'quote'
    ? new GatewayError('INVALID_INPUT', `usePermit is not available: ${why}`, { data: 'usePermit' })
    : new GatewayError('PERMIT_FAILED', `The permit is refused: ${why}`, { data: 'RECENT_REVERT' });
}
