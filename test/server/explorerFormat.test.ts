/**
 * The explorer's display formatting (`src/server/explorer/format.js`, the module the page imports): amounts to
 * significant digits with the exact value beside, dollars to the cent, and fees as positive costs.
 */
import { describe, expect, it } from 'vitest';
import { exactAmount, feeCost, formatAmount, formatUsd } from '../../src/server/explorer/format.js';

describe('formatAmount', () => {
  it.each([
    // [amount in the smallest unit, decimals, shown]
    ['99878676666666666', 18, '0.0998787'], // the 0.099878676666666666 ETH
    ['10000000000000000', 18, '0.01'],
    ['1000000000000000000', 18, '1'],
    ['1234567890000000000', 18, '1.23457'],
    ['1234565000000000000', 18, '1.23457'], // half rounds away from zero
    ['1234564999999999999', 18, '1.23456'],
    ['999999500000000000', 18, '1'], // the carry reaches the integer part
    ['999999499999999999', 18, '0.999999'],
    ['1', 18, '0.000000000000000001'], // one wei is not zero
    ['15', 18, '0.000000000000000015'],
    ['0', 18, '0'],
    ['0', 6, '0'],
    ['1', 6, '0.000001'],
    ['1500000', 6, '1.5'],
    ['123456789', 6, '123.457'],
    ['1234567891234', 6, '1,234,568'], // a large integer part is kept whole, grouped
    ['999999999999', 6, '1,000,000'],
    ['123456789012345678901234567890', 18, '123,456,789,012'],
    ['-99878676666666666', 18, '-0.0998787'],
    ['-1234565000000000000', 18, '-1.23457'], // half away from zero on the negative side too
    ['-1', 6, '-0.000001'],
    ['42', 0, '42'],
    ['1234567', 0, '1,234,567'],
  ])('%s with %i decimals reads %s', (amount, decimals, shown) => {
    expect(formatAmount(amount, decimals)).toBe(shown);
  });

  it('takes a bigint and other numbers of digits', () => {
    expect(formatAmount(99878676666666666n, 18, 4)).toBe('0.09988');
    expect(formatAmount(1999n, 3, 2)).toBe('2');
    expect(formatAmount(1999n, 3, 1)).toBe('2');
  });

  it('refuses what is not an integer amount', () => {
    for (const bad of ['1.5', '', '0x10', ' 1', 'abc']) expect(() => formatAmount(bad, 18)).toThrow(TypeError);
  });
});

describe('exactAmount', () => {
  it.each([
    ['99878676666666666', 18, '0.099878676666666666'],
    ['1000000000000000000', 18, '1'],
    ['1', 18, '0.000000000000000001'],
    ['0', 18, '0'],
    ['1500000', 6, '1.5'],
    ['123456789012345678901234567890', 18, '123456789012.34567890123456789'],
    ['-1500000', 6, '-1.5'],
    ['7', 0, '7'],
  ])('%s with %i decimals is %s', (amount, decimals, exact) => {
    expect(exactAmount(amount, decimals)).toBe(exact);
  });
});

describe('formatUsd', () => {
  it.each([
    ['0.327339', '$0.33'],
    ['-0.327339', '-$0.33'],
    ['0.325', '$0.33'], // half away from zero
    ['-0.325', '-$0.33'],
    ['0.324999', '$0.32'],
    ['1234.5', '$1,234.50'],
    ['1234567.891', '$1,234,567.89'],
    ['12', '$12.00'],
    ['0', '$0.00'],
    ['0.000000', '$0.00'],
    ['-0', '$0.00'],
    ['0.004', '<$0.01'], // not zero, less than a cent
    ['-0.000001', '-<$0.01'],
    ['0.005', '$0.01'],
    ['0.995', '$1.00'],
    ['99.999', '$100.00'],
  ])('%s reads %s', (usd, shown) => {
    expect(formatUsd(usd)).toBe(shown);
  });

  it('refuses what is not a decimal number', () => {
    for (const bad of ['', '1e3', '$1', '1,000', 'NaN']) expect(() => formatUsd(bad)).toThrow(TypeError);
  });
});

describe('feeCost', () => {
  it("shows a fee (the API's negative USD beside a positive amount) as a positive cost", () => {
    // The example: "0.000109113 ETH ($-0.327339)".
    expect(feeCost('execution', { amount: '109113000000000', usd: '-0.327339' }, 18)).toEqual({
      name: 'Execution (gas and the solver)',
      amount: '0.000109113',
      exact: '0.000109113',
      usd: '$0.33',
    });
    expect(feeCost('app', { amount: '1234567', usd: '-1.234567' }, 6)).toMatchObject({
      amount: '1.23457',
      exact: '1.234567',
      usd: '$1.23',
    });
  });

  it('a sponsored part (positive in the API) is a positive amount too; a zero fee is zero', () => {
    expect(feeCost('sponsored', { amount: '500000', usd: '0.5' }, 6)).toMatchObject({
      name: 'Paid by a sponsor',
      amount: '0.5',
      usd: '$0.50',
    });
    expect(feeCost('platform', { amount: '0', usd: '0' }, 18)).toMatchObject({ amount: '0', usd: '$0.00' });
  });

  it('a swap that gained (a negative cost) keeps its minus sign on both', () => {
    expect(feeCost('swap', { amount: '-2000', usd: '0.002' }, 6)).toMatchObject({ amount: '-0.002', usd: '-<$0.01' });
    expect(feeCost('swap', { amount: '-20000', usd: '0.02' }, 6)).toMatchObject({ amount: '-0.02', usd: '-$0.02' });
  });

  it('keeps the name of a bucket it does not know', () => {
    expect(feeCost('rent', { amount: '1', usd: '-0.01' }, 0).name).toBe('rent');
  });
});
