import { randomBytes } from 'node:crypto';
import { encodeAbiParameters, parseAbiParameters, toHex, type Address, type Hex } from 'viem';
import { keccak256Hex } from '../keccak.js';
import type { ChainConfig } from '../chains/types.js';
import type { Pricing } from './pricing.js';
import type { ResolvedRoute } from './resolve.js';
import type { ProtocolOrder } from './types.js';

/** ABI layout of a protocol v2 order; `orderId` is keccak256 of its encoding. */
const ORDER_ABI = parseAbiParameters([
  'Order order',
  'struct Payment { string chainId; address currency; uint256 amount; uint256 weight; }',
  'struct Refund { string chainId; address recipient; address currency; uint256 minimumAmount; uint256 deadline; bytes extraData; }',
  'struct Input { Payment payment; Refund[] refunds; }',
  'struct OutputPayment { address recipient; address currency; uint256 minimumAmount; uint256 expectedAmount; }',
  'struct Output { string chainId; OutputPayment[] payments; bytes[] calls; uint256 deadline; bytes extraData; }',
  'struct Fee { address recipient; string chainId; address currency; uint256 amount; }',
  'struct Order { string version; string solverChainId; address solver; bytes32 salt; Input[] inputs; Output output; Fee[] fees; }',
]);
const CALL_ABI = parseAbiParameters('address to, bytes data, uint256 value');
const REQUEST_ID_ABI = parseAbiParameters('bytes32 orderId, uint256 originChainId');

export const ORDER_VERSION = 'v1';

/** Protocol chain id of a chain: its name, as in the catalogue's `protocol.v2.chainId`. */
const protocolChainId = (chain: ChainConfig): string => chain.name;

export interface BuildOrderParameters {
  route: ResolvedRoute;
  pricing: Pricing;
  solver: Address;
  /** Unix seconds after which the request is no longer filled. */
  deadline: number;
  /** Unix seconds until which a refund of the deposit is owed. */
  refundDeadline: number;
  /** 32 random bytes unless given (tests). */
  salt?: Hex;
}

/**
 * The protocol v2 order of a quote: what the user pays (inputs, with where refunds go), what the solver
 * delivers (output payments and calls, with a deadline) and the fees, plus its id. The request id is derived
 * from the order id and the origin chain, so a deposit carrying it is attributable to exactly one order.
 */
export function buildOrder(params: BuildOrderParameters): { order: ProtocolOrder; requestId: Hex } {
  const { route, pricing, solver, deadline, refundDeadline } = params;
  const salt = params.salt ?? toHex(randomBytes(32));
  const originId = protocolChainId(route.origin);
  const destinationId = protocolChainId(route.destination);
  const currencyIn = route.currencyIn.address;
  const fees: ProtocolOrder['orderData']['fees'] = [
    ...(pricing.fees.platform > 0n ? [{ recipient: solver, chainId: originId, currency: currencyIn, amount: pricing.fees.platform }] : []),
    ...pricing.fees.appFees
      .filter((fee) => fee.amount > 0n)
      .map((fee) => ({ recipient: fee.recipient, chainId: originId, currency: currencyIn, amount: fee.amount })),
  ];
  const orderData: ProtocolOrder['orderData'] = {
    version: ORDER_VERSION,
    solverChainId: originId,
    solver,
    salt,
    inputs: [
      {
        payment: { chainId: originId, currency: currencyIn, amount: pricing.amountIn, weight: 1n },
        refunds: [
          { chainId: originId, recipient: route.refundTo, currency: currencyIn, minimumAmount: pricing.amountIn, deadline: refundDeadline, extraData: '0x' },
        ],
      },
    ],
    output: {
      chainId: destinationId,
      payments: [
        { recipient: route.recipient, currency: route.currencyOut.address, minimumAmount: pricing.minimumAmountOut, expectedAmount: pricing.amountOut },
      ],
      calls: route.calls.map((call) => encodeAbiParameters(CALL_ABI, [call.to, call.data, call.value])),
      deadline,
      extraData: '0x',
    },
    fees,
  };
  const orderId = keccak256Hex(
    encodeAbiParameters(ORDER_ABI, [
      {
        ...orderData,
        inputs: orderData.inputs.map((input) => ({
          payment: input.payment,
          refunds: input.refunds.map((refund) => ({ ...refund, deadline: BigInt(refund.deadline) })),
        })),
        output: { ...orderData.output, deadline: BigInt(orderData.output.deadline) },
      },
    ]),
  );
  const requestId = keccak256Hex(encodeAbiParameters(REQUEST_ID_ABI, [orderId, BigInt(route.origin.id)]));
  return {
    requestId,
    order: {
      orderId,
      hubType: 'onchain',
      orderData,
      paymentDetails: { chainId: originId, depository: route.origin.contracts.depository, currency: currencyIn, amount: pricing.amountIn },
    },
  };
}
