// How the explorer writes amounts, dollars and fees for people: display only. The API's amounts stay exact
// integer strings in the smallest unit; these functions round a copy of them with bigint arithmetic (no floating
// point, so an 18-decimal amount rounds like a 6-decimal one) and never change what the page holds or links.
// Pure functions, no DOM: the browser imports this module and the unit tests do too.

/** Significant digits an amount is shown with; its integer part is never cut. */
export const SIGNIFICANT_DIGITS = 6;

const TEN = 10n;

/** `amount` (an integer string or bigint, may be negative) as a bigint; throws on anything else. */
function toBigInt(amount) {
  if (typeof amount === 'bigint') return amount;
  if (typeof amount === 'string' && /^-?\d+$/.test(amount)) return BigInt(amount);
  throw new TypeError(`not an integer amount: ${String(amount)}`);
}

/** `value` divided by 10^places, rounded half away from zero (the value is not negative). */
function divideRounded(value, places) {
  if (places <= 0) return value;
  const unit = TEN ** BigInt(places);
  const quotient = value / unit;
  return (value % unit) * 2n >= unit ? quotient + 1n : quotient;
}

/** Thousands separators in a string of digits. */
function group(digits) {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A non-negative integer of the smallest unit as a decimal string, trailing fraction zeros dropped. */
function decimalOf(value, decimals) {
  const text = value.toString().padStart(decimals + 1, '0');
  const whole = text.slice(0, text.length - decimals);
  const fraction = text.slice(text.length - decimals).replace(/0+$/, '');
  return { whole, fraction };
}

/**
 * The exact decimal value of an amount in its smallest unit (`"99878676666666666"`, 18 → `"0.099878676666666666"`),
 * the value a title and a copy carry.
 */
export function exactAmount(amount, decimals) {
  const value = toBigInt(amount);
  const { whole, fraction } = decimalOf(value < 0n ? -value : value, decimals);
  return `${value < 0n ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * An amount in its smallest unit, rounded to `digits` significant digits (half away from zero) for reading:
 * `"99878676666666666"`, 18 → `"0.0998787"`; the integer part is kept whole and grouped (`"1,234,568"`); a tiny
 * amount keeps its leading zeros (1 wei → `"0.000000000000000001"`), so nothing non-zero reads as zero.
 */
export function formatAmount(amount, decimals, digits = SIGNIFICANT_DIGITS) {
  const value = toBigInt(amount);
  const magnitude = value < 0n ? -value : value;
  if (magnitude === 0n) return '0';
  const length = magnitude.toString().length;
  const keep = Math.max(digits, length - decimals);
  const dropped = length - keep;
  const rounded = dropped > 0 ? divideRounded(magnitude, dropped) * TEN ** BigInt(dropped) : magnitude;
  const { whole, fraction } = decimalOf(rounded, decimals);
  return `${value < 0n ? '-' : ''}${group(whole)}${fraction ? `.${fraction}` : ''}`;
}

/** A decimal string (`"-0.327339"`, `"12"`) as an integer and its number of decimals; throws on anything else. */
function parseDecimal(text) {
  const match = typeof text === 'string' ? /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim()) : null;
  if (match === null) throw new TypeError(`not a decimal number: ${String(text)}`);
  const fraction = match[3] || '';
  const value = BigInt(match[2] + fraction);
  return { value: match[1] === '-' ? -value : value, decimals: fraction.length };
}

/**
 * A USD value (a decimal string as the API sends it) in dollars and cents: `"1234.5"` → `"$1,234.50"`,
 * `"-0.327339"` → `"-$0.33"`; a non-zero value under a cent is `"<$0.01"` (`"-<$0.01"` when negative).
 */
export function formatUsd(usd) {
  const { value, decimals } = parseDecimal(usd);
  const magnitude = value < 0n ? -value : value;
  const sign = value < 0n ? '-' : '';
  const cents = decimals >= 2 ? divideRounded(magnitude, decimals - 2) : magnitude * TEN ** BigInt(2 - decimals);
  if (cents === 0n) return magnitude === 0n ? '$0.00' : `${sign}<$0.01`;
  const text = cents.toString().padStart(3, '0');
  return `${sign}$${group(text.slice(0, -2))}.${text.slice(-2)}`;
}

/** The negation of a decimal string, as a decimal string (`"-0.5"` → `"0.5"`, `"0"` → `"0"`). */
function negate(text) {
  const trimmed = text.trim();
  if (trimmed.startsWith('-')) return trimmed.slice(1);
  return /^0*(\.0*)?$/.test(trimmed) ? trimmed : `-${trimmed}`;
}

/** The fee buckets of `GET /requests/v3` (`data.fees.quoted`), in the order they are shown, with their names. */
export const FEE_NAMES = {
  execution: 'Execution (gas and the solver)',
  swap: 'Swap',
  platform: 'Platform',
  app: 'App',
  sponsored: 'Paid by a sponsor',
};

/**
 * A fee bucket of `GET /requests/v3` as a cost to the user: the API gives a cost's USD value negative (its price
 * impact) beside a positive amount, and a sponsored part positive; both read here as positive amounts of money.
 * A negative cost (a swap that gained) keeps its minus sign. `exact` is the amount to the last unit.
 */
export function feeCost(name, bucket, decimals) {
  const usd = name === 'sponsored' ? bucket.usd : negate(bucket.usd);
  return {
    name: FEE_NAMES[name] || name,
    amount: formatAmount(bucket.amount, decimals),
    exact: exactAmount(bucket.amount, decimals),
    usd: formatUsd(usd),
  };
}
