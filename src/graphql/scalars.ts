/**
 * Implementations of the schema's custom scalars. Descriptions live in schema/schema.graphql (createGraphQL
 * keeps them over these implementations' own).
 */
import { GraphQLError, GraphQLScalarType, Kind, print, type ValueNode } from 'graphql';
import { GraphQLDateTimeISO, GraphQLJSONObject, GraphQLTimestamp } from 'graphql-scalars';

const decimalInteger = /^-?[0-9]+$/;

/**
 * A scalar's refusal, with the code and status REST answers for the same malformed value (its schema's pattern):
 * `INVALID_ADDRESS` for an address (as the core's `parseAddress`), `INVALID_INPUT` for the rest. What a scalar
 * accepts (a negative or zero `BigInt`, say) is checked again by the core, per field.
 */
function scalarError(message: string, code: 'INVALID_INPUT' | 'INVALID_ADDRESS', node?: ValueNode): GraphQLError {
  return new GraphQLError(message, {
    ...(node === undefined ? {} : { nodes: node }),
    extensions: { code, status: 400 },
  });
}
/** 2^256: amounts are uint256 on chain (a signed margin is kept for fees that may be negative). */
const bigIntLimit = 1n << 256n;

function toBigInt(value: unknown): bigint {
  let result: bigint | undefined;
  if (typeof value === 'bigint') result = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) result = BigInt(value);
  else if (typeof value === 'string' && decimalInteger.test(value) && value.length <= 80) result = BigInt(value);
  if (result === undefined || result >= bigIntLimit || result <= -bigIntLimit) {
    throw scalarError(
      `BigInt cannot represent ${describe(value)}: expected an integer as a decimal string`,
      'INVALID_INPUT',
    );
  }
  return result;
}

/** Integer of any size, in smallest units: a decimal string on the wire, a `bigint` in resolvers. */
export const BigIntScalar = new GraphQLScalarType<bigint, string>({
  name: 'BigInt',
  serialize: (value) => toBigInt(value).toString(),
  parseValue: toBigInt,
  parseLiteral: (node) => {
    if (node.kind === Kind.STRING || node.kind === Kind.INT) return toBigInt(node.value);
    throw literalError('BigInt', node, 'INVALID_INPUT');
  },
});

function hexScalar(
  name: string,
  pattern: RegExp,
  expected: string,
  code: 'INVALID_INPUT' | 'INVALID_ADDRESS',
): GraphQLScalarType<`0x${string}`, string> {
  const check = (value: unknown): `0x${string}` => {
    if (typeof value === 'string' && pattern.test(value)) return value as `0x${string}`;
    throw scalarError(`${name} cannot represent ${describe(value)}: expected ${expected}`, code);
  };
  return new GraphQLScalarType<`0x${string}`, string>({
    name,
    serialize: check,
    parseValue: check,
    parseLiteral: (node) => {
      if (node.kind === Kind.STRING) return check(node.value);
      throw literalError(name, node, code);
    },
  });
}

/** `0x` + 40 hex digits; the letter case is kept as given. */
export const AddressScalar = hexScalar(
  'Address',
  /^0x[0-9a-fA-F]{40}$/,
  '0x followed by 40 hexadecimal digits',
  'INVALID_ADDRESS',
);

/** `0x` + any number of hex digits. */
export const HexScalar = hexScalar('Hex', /^0x[0-9a-fA-F]*$/, '0x followed by hexadecimal digits', 'INVALID_INPUT');

/** ISO-8601 date-time string on the wire (graphql-scalars' DateTimeISO under the schema's name). */
export const DateTimeScalar = new GraphQLScalarType({ ...GraphQLDateTimeISO.toConfig(), name: 'DateTime' });

export const scalarResolvers = {
  BigInt: BigIntScalar,
  Address: AddressScalar,
  Hex: HexScalar,
  DateTime: DateTimeScalar,
  Timestamp: GraphQLTimestamp,
  JSONObject: GraphQLJSONObject,
};

function literalError(name: string, node: ValueNode, code: 'INVALID_INPUT' | 'INVALID_ADDRESS'): GraphQLError {
  return scalarError(`${name} cannot represent literal ${print(node)}`, code, node);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 90 ? `${value.slice(0, 90)}...` : value);
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
