import { latestExecutionRevert } from '../../store/executionReverts.repository.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { defaultExecutionRevertSettings } from './executionRevertSettings.js';

/** Who asked for a transaction the solver sends and pays for: the order's user, and the API key when there was one. */
export interface Requester {
  user: string;
  apiKeyId: string | null;
}

/**
 * Refuses a call quote or a gasless batch of a requester (by user address, and by API key) one of whose fills with
 * calls or gasless batches reverted on chain within the cooldown: a clean simulation does not bind what the chain
 * does later (a contract reading `block.number`, state moved between the simulation and the block), and each such
 * revert costs the solver gas. A reverted fill is paid from the deposit (`refund.ts`); a reverted gasless batch
 * moved nothing of the user's, so the bar is what bounds it: one revert per requester per cooldown. 429
 * `RATE_LIMITED` with `retryAfterSeconds` in `errorData`, before anything is stored, simulated or sent.
 */
export async function checkNoRecentExecutionRevert(
  ctx: Pick<CoreContext, 'db' | 'now' | 'config'>,
  requester: Requester,
  what: 'Call quotes' | 'Gasless batches',
): Promise<void> {
  const { cooldownSeconds } = ctx.config.executionReverts ?? defaultExecutionRevertSettings;
  if (cooldownSeconds === 0) return;
  const now = ctx.now();
  const latest = await latestExecutionRevert(ctx.db, requester, now - cooldownSeconds * 1000);
  if (latest === undefined) return;
  const retryAfterSeconds = Math.max(1, Math.ceil((latest + cooldownSeconds * 1000 - now) / 1000));
  const who = requester.apiKeyId === null ? requester.user : `${requester.user} (or this API key)`;
  throw new GatewayError(
    'RATE_LIMITED',
    `${what} of ${who} are refused for ${retryAfterSeconds} s: a fill with calls or a gasless batch of theirs reverted on chain after its simulation passed, at the solver's cost`,
    { data: `retryAfterSeconds=${retryAfterSeconds}` },
  );
}
