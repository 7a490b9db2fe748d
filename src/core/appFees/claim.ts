import { randomBytes } from 'node:crypto';
import { encodeAbiParameters, formatUnits, getAddress, keccak256, type Address, type Hex } from 'viem';
import {
  availableAppBalanceUsd,
  getClaim,
  insertClaim,
  listClaims,
  lockAppWallet,
  markClaimAuthorized,
} from '../../store/appFeeClaims.repository.js';
import type { ClaimRecord } from '../../records/appFeeClaim.js';
import { requireChain, requireCurrency } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { amountOf } from '../fees/presentFees.js';
import { crashPoint } from '../faults.js';
import { fromUsdMicros, toUsdMicros } from '../market.js';
import { refuseBurnAddress } from '../burnAddresses.js';
import { parseAddress, parseInteger, parseUint } from '../inputs.js';
import { refuseGatewayAddress } from '../chains/gatewayAddresses.js';
import { quoteCurrency, type Amount } from '../vocabulary/amount.js';
import { formatUsdMicros } from '../usd.js';
import { availableAppBalance } from './getAppFeeBalances.js';
import { claimSettingsOf, defaultAppFeeClaimSettings } from './claimSettings.js';

export interface StartClaimParameters {
  wallet: string;
  chainId: number;
  currency: string;
  recipient: string;
  /** Smallest units of `currency` to take from the balance (the fee included); default all that is available. */
  amount?: bigint;
}

export interface ClaimStep {
  id: 'authorize';
  action: string;
  description: string;
  kind: 'signature';
  requestId: Hex;
  items: Array<{
    status: 'incomplete';
    data: {
      sign: { signatureKind: 'eip191'; message: Hex };
      post: { endpoint: '/execute/permits'; method: 'POST'; body: { kind: 'claim'; requestId: Hex } };
    };
  }>;
}

/**
 * The 32-byte message a wallet signs (EIP-191) to authorize a claim: a hash of everything the claim will do, the
 * gateway's solver address included, so a signature authorizes exactly this claim at this gateway.
 */
export function claimMessage(claim: {
  id: Hex;
  wallet: Address;
  recipient: Address;
  chainId: number;
  currency: Address;
  amount: bigint;
  expiresAt: number;
  solver: Address;
}): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'string' },
        { type: 'bytes32' },
        { type: 'address' },
        { type: 'address' },
        { type: 'uint256' },
        { type: 'address' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'address' },
      ],
      [
        'Claim app fees',
        claim.id,
        claim.wallet,
        claim.recipient,
        BigInt(claim.chainId),
        claim.currency,
        claim.amount,
        BigInt(claim.expiresAt),
        claim.solver,
      ],
    ),
  );
}

/**
 * POST /app-fees/{wallet}/claim: prices the claim now (the wallet's available USD balance, or `amount` of the
 * payout currency, less the chain's claim fee, converted at the currency's price), records it `authorizing`
 * and answers the signature step. Nothing is reserved or paid until the wallet's signature is posted.
 */
export async function startClaim(ctx: CoreContext, params: StartClaimParameters): Promise<{ steps: ClaimStep[] }> {
  const wallet = parseAddress(params.wallet, 'wallet');
  const recipient = parseAddress(params.recipient, 'recipient');
  parseAddress(params.currency, 'currency');
  const amount = params.amount === undefined ? undefined : parseUint(params.amount, 'amount', { min: 1n });
  refuseBurnAddress(recipient, 'recipient');
  refuseGatewayAddress(ctx, recipient, 'recipient');
  const chain = requireChain(ctx, params.chainId);
  const currency = requireCurrency(chain, params.currency);
  const settings = claimSettingsOf(ctx.config.appFeeClaims ?? defaultAppFeeClaimSettings, chain.id);
  const available = await availableAppBalance(ctx, wallet);
  if (available <= 0n) throw new GatewayError('INVALID_INPUT', `Wallet ${wallet} has no app fees to claim`);
  const price = await ctx.market.usdPrice(chain.id, currency);
  let usdMicros = available;
  if (amount !== undefined) {
    usdMicros = toUsdMicros(amount, currency.decimals, price, 'up');
    if (usdMicros > available)
      throw new GatewayError(
        'INVALID_INPUT',
        `amount is worth ${formatUsdMicros(usdMicros)} USD; the available balance is ${formatUsdMicros(available)} USD`,
      );
  }
  if (usdMicros < settings.minimumUsdMicros)
    throw new GatewayError(
      'AMOUNT_TOO_LOW',
      `The claim is worth ${formatUsdMicros(usdMicros)} USD; the minimum claim on chain ${chain.id} is ${formatUsdMicros(settings.minimumUsdMicros)} USD`,
    );
  const payout = fromUsdMicros(usdMicros - settings.feeUsdMicros, currency.decimals, price, 'down');
  if (usdMicros <= settings.feeUsdMicros || payout <= 0n)
    throw new GatewayError(
      'AMOUNT_TOO_LOW',
      `The claim is worth ${formatUsdMicros(usdMicros)} USD, not more than the claim fee on chain ${chain.id} (${formatUsdMicros(settings.feeUsdMicros)} USD)`,
    );
  const now = ctx.now();
  const id: Hex = `0x${randomBytes(32).toString('hex')}`;
  const expiresAt = now + (ctx.config.appFeeClaims ?? defaultAppFeeClaimSettings).ttlMs;
  const message = claimMessage({
    id,
    wallet,
    recipient,
    chainId: chain.id,
    currency: currency.address,
    amount: payout,
    expiresAt,
    solver: ctx.config.solverAddress,
  });
  await insertClaim(ctx.db, {
    id,
    wallet,
    recipient,
    chainId: chain.id,
    currency: currency.address,
    usdMicros,
    feeUsdMicros: settings.feeUsdMicros,
    amount: payout,
    message,
    expiresAt,
    now,
  });
  return {
    steps: [
      {
        id: 'authorize',
        action: 'Confirm claim',
        description: `Sign to claim ${formatUnits(payout, currency.decimals)} ${currency.symbol} of app fees on ${chain.displayName}`,
        kind: 'signature',
        requestId: id,
        items: [
          {
            status: 'incomplete',
            data: {
              sign: { signatureKind: 'eip191', message },
              post: { endpoint: '/execute/permits', method: 'POST', body: { kind: 'claim', requestId: id } },
            },
          },
        ],
      },
    ],
  };
}

/**
 * POST /execute/permits with `kind: "claim"`: verifies the wallet's signature of the claim's message (an EOA's
 * or, for a contract wallet, its EIP-1271 `isValidSignature` on the claim's chain), then authorizes the claim if
 * the balance still covers it. The payout follows on the solver (`claimPayer.ts`).
 */
export async function authorizeClaimSignature(
  ctx: CoreContext,
  params: { requestId: string; signature: Hex },
): Promise<{ message: string }> {
  const claim = await getClaim(ctx.db, params.requestId);
  if (claim === undefined) throw new GatewayError('NOT_FOUND', `No claim ${params.requestId}`);
  if (claim.status !== 'authorizing') throw alreadyAuthorized(claim);
  if (claim.expiresAt <= ctx.now())
    throw new GatewayError('INVALID_INPUT', `Claim ${claim.id} expired; start a new claim`);
  const valid = await ctx.market.verifyMessage(claim.chainId, {
    signer: claim.wallet as Address,
    hash: claim.message as Hex,
    signature: params.signature,
  });
  if (!valid)
    throw new GatewayError(
      'PERMIT_FAILED',
      `The signature is not the wallet ${getAddress(claim.wallet)}'s of claim ${claim.id}`,
    );
  const result = await authorizeClaim(ctx, claim.id);
  if (!result.ok) {
    if (result.reason === 'not-found') throw new GatewayError('NOT_FOUND', `No claim ${params.requestId}`);
    if (result.reason === 'not-authorizing') throw alreadyAuthorized(result.claim!);
    if (result.reason === 'expired')
      throw new GatewayError('INVALID_INPUT', `Claim ${claim.id} expired; start a new claim`);
    throw new GatewayError(
      'INSUFFICIENT_FUNDS',
      `The available app-fee balance of ${getAddress(claim.wallet)} no longer covers claim ${claim.id}`,
    );
  }
  crashPoint(ctx.config.crashAt, 'claim-authorized');
  ctx.solving.running?.claimPayer.wake();
  return { message: 'Claim authorized' };
}

type AuthorizeClaimResult =
  | { ok: true; claim: ClaimRecord }
  | { ok: false; reason: 'not-found' | 'not-authorizing' | 'expired' | 'insufficient'; claim?: ClaimRecord };

/**
 * Moves a claim whose signature was verified `authorizing -> pending` if it has not expired and the wallet's available
 * balance (`availableAppBalanceUsd`: its app fees less its authorized, unpaid claims and its fast fills' holds) still
 * covers it. One transaction under the wallet's lock, so two claims of one wallet (or a claim and a fast fill) cannot
 * both take one balance, and the status condition makes a replayed signature change nothing.
 */
async function authorizeClaim(ctx: CoreContext, id: string): Promise<AuthorizeClaimResult> {
  return ctx.db.transaction().execute(async (trx): Promise<AuthorizeClaimResult> => {
    const claim = await getClaim(trx, id);
    if (claim === undefined) return { ok: false, reason: 'not-found' };
    await lockAppWallet(trx, claim.wallet);
    const current = (await getClaim(trx, id))!;
    const now = ctx.now();
    if (current.status !== 'authorizing') return { ok: false, reason: 'not-authorizing', claim: current };
    if (current.expiresAt <= now) return { ok: false, reason: 'expired', claim: current };
    if ((await availableAppBalanceUsd(trx, current.wallet)) < current.usdMicros)
      return { ok: false, reason: 'insufficient', claim: current };
    const moved = await markClaimAuthorized(trx, { id, now });
    return moved === undefined ? { ok: false, reason: 'not-authorizing', claim: current } : { ok: true, claim: moved };
  });
}

const alreadyAuthorized = (claim: ClaimRecord) =>
  new GatewayError('CONFLICT', `Claim ${claim.id} was already authorized (${claim.status})`);

export interface ClaimListing {
  claims: Array<{
    claimId: string;
    wallet: string;
    recipient: string;
    currency: Amount;
    txHash: string | null;
    status: 'waiting' | 'pending' | 'success' | 'failure' | 'expired';
    createdAt: string;
  }>;
  continuation: string | null;
}

const wireStatus = (claim: ClaimRecord, now: number): ClaimListing['claims'][number]['status'] => {
  switch (claim.status) {
    case 'authorizing':
      return claim.expiresAt <= now ? 'expired' : 'waiting';
    case 'pending':
      return 'pending';
    case 'success':
      return 'success';
    case 'failed':
      return 'failure';
  }
};

/** GET /app-fees/{wallet}/claims: the wallet's claims, newest first; `continuation` pages on. */
export async function listAppFeeClaims(
  ctx: CoreContext,
  params: { wallet: string; limit?: number; continuation?: string },
): Promise<ClaimListing> {
  const wallet = parseAddress(params.wallet, 'wallet');
  const limit = parseInteger(params.limit ?? 20, 'limit', 1, 100);
  let beforeSeq: number | undefined;
  if (params.continuation !== undefined) {
    beforeSeq = /^[1-9][0-9]{0,15}$/.test(params.continuation) ? Number(params.continuation) : NaN;
    if (!Number.isSafeInteger(beforeSeq)) throw new GatewayError('INVALID_INPUT', 'Invalid continuation');
  }
  const rows = await listClaims(ctx.db, { wallet, limit, ...(beforeSeq === undefined ? {} : { beforeSeq }) });
  const now = ctx.now();
  const claims = rows.map((claim) => {
    const chain = requireChain(ctx, claim.chainId);
    const currency = requireCurrency(chain, claim.currency);
    return {
      claimId: claim.id,
      wallet: getAddress(claim.wallet),
      recipient: getAddress(claim.recipient),
      currency: amountOf(quoteCurrency(chain.id, currency), claim.amount, claim.usdMicros - claim.feeUsdMicros),
      txHash: claim.txHash,
      status: wireStatus(claim, now),
      createdAt: new Date(claim.createdAt).toISOString(),
    };
  });
  return { claims, continuation: rows.length === limit ? String(rows.at(-1)!.seq) : null };
}
