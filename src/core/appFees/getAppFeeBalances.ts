import { parseAddress } from '../inputs.js';
import { availableAppBalanceUsd, fastFillHoldsUsd, pendingClaimsUsd } from '../../store/appFeeClaims.repository.js';
import { accountOwed } from '../../store/ledger.repository.js';
import { accounts } from '../ledger/movements.js';
import { findCurrency } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { amountOf } from '../fees/presentFees.js';
import { quoteCurrency, type Amount } from '../vocabulary/amount.js';
import { formatUsdMicros } from '../usd.js';

export interface AppFeeBalances {
  /** What the wallet has accrued, per chain and currency it was paid in (smallest units). */
  balances: Amount[];
  /** USD decimal strings. */
  totalBalanceUsd: string;
  outstandingFastFillBalanceUsd: string;
  availableBalanceUsd: string;
}

/**
 * GET /app-fees/{wallet}/balances: the app fees accrued to a recipient wallet, read from the ledger (`app:<wallet>`,
 * credited at fill time in the currency the user paid). How the balance is held: each accrual keeps its amount
 * in the input currency and its USD value at fill time; the wallet's USD balance is the sum of those values,
 * so it is USD-stable (a later price move of the currency does not change what the wallet is owed), like the
 * reference's single USDC balance. `amountUsd` of each currency is that same fill-time value.
 */
export async function getAppFeeBalances(ctx: CoreContext, params: { wallet: string }): Promise<AppFeeBalances> {
  parseAddress(params.wallet, 'wallet');
  let totalMicros = 0n;
  const balances: Amount[] = [];
  for (const owed of await accountOwed(ctx.db, accounts.app(params.wallet))) {
    const chain = ctx.config.chains.find((candidate) => candidate.id === owed.chainId);
    const currency = chain === undefined ? undefined : findCurrency(chain, owed.currency);
    if (owed.amount === 0n || chain === undefined || currency === undefined) continue;
    totalMicros += owed.usdMicros;
    balances.push(amountOf(quoteCurrency(chain.id, currency), owed.amount, owed.usdMicros));
  }
  // A claim the wallet authorized and that is not paid yet has left the balance already.
  totalMicros -= await pendingClaimsUsd(ctx.db, params.wallet);
  // Fast fills of the wallet's API keys whose deposits have not arrived hold part of it.
  const outstandingMicros = await fastFillHoldsUsd(ctx.db, params.wallet);
  return {
    balances,
    totalBalanceUsd: formatUsdMicros(totalMicros),
    outstandingFastFillBalanceUsd: formatUsdMicros(outstandingMicros),
    availableBalanceUsd: formatUsdMicros(totalMicros - outstandingMicros),
  };
}

/** What `wallet` can claim now, micro-USD (see `availableAppBalanceUsd`). */
export async function availableAppBalance(ctx: CoreContext, wallet: string): Promise<bigint> {
  return availableAppBalanceUsd(ctx.db, wallet);
}
