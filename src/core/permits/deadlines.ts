import type { Hex } from 'viem';
import {
  insertPermitDeadline,
  listPermitDeadlines,
  type PermitNonceKey,
} from '../../store/permitDeadlines.repository.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';

/**
 * The deadline of an EIP-2612 permit quoted for `requestId`: the latest second from `earliest` to `latest` that
 * no other quote holds for the same owner, token and nonce, claimed in `permit_deadlines`.
 *
 * An EIP-2612 message names no request: it is (owner, spender, value, nonce, deadline), the spender is always the
 * origin's approval proxy and the token fixes the nonce (`nonces(owner)`, the same for every quote until one
 * permit is used). So the deadline is the only field the gateway chooses, and two quotes of one user for one
 * amount in one second would ask for the same message: a signature made for one request (its recipient) would be
 * accepted for the other. A store-enforced unique deadline per (chain, token, owner, nonce) makes every stored
 * 2612 message a single request's, whatever the timing and however many instances quote, without refusing a
 * second quote while the first waits (apps quote again as the user edits an amount); binding the request id into
 * the deadline (a hash modulo a window) would not, as two ids can land on one second. The deadline moves earlier,
 * never past what was asked, so a permit never outlives its quote; when every second down to `earliest` (the
 * least validity a permit deposit needs) is held, the quote is refused `RATE_LIMITED`.
 */
export async function reservePermitDeadline(
  ctx: Pick<CoreContext, 'db'>,
  key: PermitNonceKey,
  window: { earliest: number; latest: number },
  requestId: Hex,
): Promise<number> {
  const { earliest, latest } = window;
  const taken = new Set(await listPermitDeadlines(ctx.db, key, earliest, latest));
  // The claim decides: a second another quote claimed since the read is skipped like the ones read.
  for (let deadline = latest; deadline >= earliest; deadline--) {
    if (!taken.has(deadline) && (await insertPermitDeadline(ctx.db, key, deadline, requestId))) return deadline;
  }
  throw new GatewayError(
    'RATE_LIMITED',
    `Too many permits of ${key.owner} wait on its nonce ${key.nonce} of token ${key.token} on chain ${key.chainId}: ` +
      'sign one of them, let them expire, or quote without usePermit',
  );
}
