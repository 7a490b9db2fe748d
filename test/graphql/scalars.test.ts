/** The custom scalars, table-driven: what each accepts, what it rejects, and how it serializes. */
import { Kind, parseValue as parseLiteralText } from 'graphql';
import { describe, expect, it } from 'vitest';
import { AddressScalar, BigIntScalar, DateTimeScalar, HexScalar } from '../../src/graphql/scalars.js';

const max = (1n << 256n) - 1n;

describe('BigInt', () => {
  it.each([
    [0n, '0'],
    [1_000_000_000_000_000_000n, '1000000000000000000'],
    [-5n, '-5'],
    [max, max.toString()],
    [42, '42'],
    ['123456789012345678901234567890', '123456789012345678901234567890'],
  ])('serializes %s as %j', (value, wire) => {
    expect(BigIntScalar.serialize(value)).toBe(wire);
  });

  it.each([
    ['1000000000000000000', 1_000_000_000_000_000_000n],
    ['-1', -1n],
    [7, 7n],
  ])('parses the variable %j', (input, expected) => {
    expect(BigIntScalar.parseValue(input)).toBe(expected);
  });

  it.each([['1.5'], [''], ['0x10'], [' 1'], ['1e18'], [1.5], [2 ** 60], [true], [null], [{}], [(max + 1n).toString()]])(
    'rejects the variable %j',
    (input) => {
      expect(() => BigIntScalar.parseValue(input)).toThrow(/^BigInt cannot represent/);
    },
  );

  it('parses string and int literals, of any size below 2^256', () => {
    expect(BigIntScalar.parseLiteral(parseLiteralText('"5"'))).toBe(5n);
    expect(BigIntScalar.parseLiteral(parseLiteralText('123456789012345678901234567890'))).toBe(
      123456789012345678901234567890n,
    );
    expect(() => BigIntScalar.parseLiteral(parseLiteralText('1.5'))).toThrow('BigInt cannot represent literal 1.5');
    expect(() => BigIntScalar.parseLiteral({ kind: Kind.BOOLEAN, value: true })).toThrow(/literal true/);
  });
});

describe('Address and Hex', () => {
  const address = '0x52908400098527886E0F7030069857D2E4169EE7';

  it('accept well-formed values as given', () => {
    expect(AddressScalar.parseValue(address)).toBe(address);
    expect(AddressScalar.serialize(address.toLowerCase())).toBe(address.toLowerCase());
    expect(HexScalar.parseValue('0x')).toBe('0x');
    expect(HexScalar.parseValue('0xdeadBEEF')).toBe('0xdeadBEEF');
    expect(HexScalar.parseLiteral(parseLiteralText('"0x01"'))).toBe('0x01');
  });

  it.each([
    [address.slice(0, -1)],
    [`${address}0`],
    [address.slice(2)],
    ['0xZZ08400098527886E0F7030069857D2E4169EE7'],
    [42],
    [null],
  ])('Address rejects %j', (input) => {
    expect(() => AddressScalar.parseValue(input)).toThrow(/^Address cannot represent/);
  });

  it.each([['deadbeef'], ['0xg0'], ['0x 1'], [1]])('Hex rejects %j', (input) => {
    expect(() => HexScalar.parseValue(input)).toThrow(/^Hex cannot represent/);
  });

  it('rejects non-string literals', () => {
    expect(() => AddressScalar.parseLiteral(parseLiteralText('12'))).toThrow('Address cannot represent literal 12');
  });
});

describe('DateTime', () => {
  it('serializes dates and ISO strings to ISO-8601 and parses ISO strings', () => {
    expect(DateTimeScalar.serialize(new Date(Date.UTC(2026, 7, 4, 12)))).toBe('2026-08-04T12:00:00.000Z');
    expect(DateTimeScalar.parseValue('2026-08-04T12:00:00Z').getTime()).toBe(Date.UTC(2026, 7, 4, 12));
    expect(() => DateTimeScalar.parseValue('yesterday')).toThrow();
  });
});
