// What the explorer says about a request that was refunded, failed or is held, in plain words. Pure functions, no
// DOM: the browser imports this module and the unit tests do too.

/** `failReason` and `refundFailReason` codes in plain words. */
export const REASONS = {
  DOUBLE_SPEND: 'This request had already been paid, so the extra deposit was sent back.',
  DEPOSITED_AMOUNT_TOO_LOW_TO_FILL: 'The deposit was smaller than the quoted amount, so it was sent back.',
  ORDER_EXPIRED: 'The deposit arrived after the quote had expired, so it was sent back.',
  SOLVER_BALANCE_TOO_LOW: 'The solver did not hold enough of the currency to deliver, so the deposit was sent back.',
  EXECUTION_REVERTED: 'The calls on the destination chain would have failed, so the deposit was sent back.',
  TRANSACTION_REVERTED: 'The delivery transaction failed on the destination chain, so the deposit was sent back.',
  ORIGIN_CURRENCY_MISMATCH: 'The deposit was made in another currency than quoted, so it was sent back.',
  ORPHANED_DEPOSIT_REFUND: 'The deposit matched no request, so it was sent back.',
  MANUAL_REFUND_REQUIRED: 'The refund could not be sent automatically; the operator must refund by hand.',
  SLIPPAGE:
    'At the time of delivery, prices had moved so far that the request would have received less than its minimum, so the deposit was sent back.',
  SWAP_IMPACT_TOO_HIGH: 'The swap would have moved the price too far, so the deposit was sent back.',
  AMOUNT_TOO_LOW_TO_REFUND: 'The deposit was too small to pay for sending it back.',
  INSUFFICIENT_BALANCE_FOR_REFUND:
    'The gateway did not hold enough to send the deposit back; the operator must refund it.',
  SPONSOR_BALANCE_TOO_LOW:
    "The app sponsoring this request's fees had run out of allowance, so the deposit was sent back.",
  MANUAL_ADMIN_REFUND: 'Refunded on request: the depositor signed a refund request, or the operator refunded it.',
  TTL_EXPIRED:
    'The request was held longer than the gateway holds a request (its maximum hold), so the deposit was sent back.',
  DEPOSIT_REORGED: 'The deposit disappeared from the origin chain (a reorganisation), so nothing was delivered.',
  UNKNOWN: 'The deposit was sent back; the gateway recorded no reason.',
};

/**
 * A reason code in plain words; a code without words here is shown as it is, after `prefix` (`Reason: `), and no
 * code at all (null, `N/A`) gives `none`.
 */
export function reasonWords(code, none, prefix = 'Reason: ') {
  if (!code || code === 'N/A') return none;
  return REASONS[code] || `${prefix}${code}`;
}

/**
 * Why fills to a chain are paused, by the kind their reason starts with (`src/core/solver/fillGate.ts`), in plain
 * words. The deposit stays with the gateway meanwhile: nothing is lost, it is filled or refunded later.
 */
const HOLDS = {
  prices: (chain) =>
    `Deliveries to ${chain} are paused because a price the gateway relies on cannot be trusted right now (its price feed is out of date or off its peg, or cannot be read). The deposit is kept safe; the request is filled, or refunded if prices moved against it, once prices are current again.`,
  'outflow limit': (chain) =>
    `Deliveries to ${chain} have reached the most the gateway sends there in a short time (its outflow limit). The deposit is kept safe; the request is filled as soon as earlier deliveries leave the limit's window.`,
  'start-up check': (chain) =>
    `The gateway cannot deliver on ${chain} until its operator fixes a problem found when it started (the chain's network, contracts or a token approval). The deposit is kept safe meanwhile.`,
};

/** Why deliveries to `chain` (its name) are held, for a pause of `kind`; a kind not known here gets a general sentence. */
export function holdWords(kind, chain) {
  return HOLDS[kind]
    ? HOLDS[kind](chain)
    : `Deliveries to ${chain} are paused by the gateway. The deposit is kept safe; the request is filled or refunded once they resume.`;
}

/**
 * A destination chain's pause from its `fills:<chainId>` check of `/ready` (`withFillPauses` in
 * `src/server/readiness.ts`: `fills paused since <ISO time> (<n> paid request(s) held): <kind>: <detail>`), as
 * `{ kind, since, message }`; null when there is no such check. A message of another form is a pause all the
 * same, of kind `unknown`.
 */
export function pauseFromCheck(check) {
  if (!check || typeof check.message !== 'string') return null;
  const match = /^fills paused since (\S+) .*?held\): ([^:]+): /.exec(check.message);
  return { kind: match ? match[2] : 'unknown', since: match ? match[1] : null, message: check.message };
}
