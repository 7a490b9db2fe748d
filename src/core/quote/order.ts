import { randomFillSync } from 'node:crypto';
import type { Address, Hex } from 'viem';
import type { ChainConfig } from '../chains/types.js';
import { fillPayee } from '../fill/fillTransaction.js';
import type { Pricing } from './pricing.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import { encodeCall, orderIdOf, requestIdOf } from './orderEncoding.js';
import type { ProtocolOrder } from './types.js';

export const ORDER_VERSION = 'v1';

/** Protocol chain id of a chain: its name, as in the catalogue's `protocol.v2.chainId`. */
const protocolChainId = (chain: ChainConfig): string => chain.name;

/**
 * 32 random bytes for an order's salt, from the system's CSPRNG. Taken from a pool refilled 4 KB at a time:
 * one `randomBytes(32)` per quote cost more than encoding and hashing the whole order. Each byte is used once.
 */
const saltPool = Buffer.alloc(4096);
let saltOffset = saltPool.length;
function randomSalt(): Hex {
  if (saltOffset === saltPool.length) {
    randomFillSync(saltPool);
    saltOffset = 0;
  }
  const salt: Hex = `0x${saltPool.toString('hex', saltOffset, saltOffset + 32)}`;
  saltOffset += 32;
  return salt;
}

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
 * from the order id and the origin chain, so a deposit carrying it is attributable to exactly one order. The
 * ABI layout both ids hash is in `orderEncoding.ts`.
 */
export function buildOrder(params: BuildOrderParameters): { order: ProtocolOrder; requestId: Hex } {
  const { route, pricing, solver, deadline, refundDeadline } = params;
  const salt = params.salt ?? randomSalt();
  const originId = protocolChainId(route.origin);
  const destinationId = protocolChainId(route.destination);
  const currencyIn = route.currencyIn.address;
  const fees: ProtocolOrder['orderData']['fees'] = [
    ...(pricing.fees.platform > 0n
      ? [{ recipient: solver, chainId: originId, currency: currencyIn, amount: pricing.fees.platform }]
      : []),
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
          {
            chainId: originId,
            recipient: route.refundTo,
            currency: currencyIn,
            minimumAmount: pricing.amountIn,
            deadline: refundDeadline,
            extraData: '0x',
          },
        ],
      },
    ],
    output: {
      chainId: destinationId,
      payments: [
        {
          // Whom the fill pays: with calls, the multicaller that runs them (listed in `calls`).
          recipient: fillPayee(route.destination.contracts, route.recipient, route.calls),
          currency: route.currencyOut.address,
          minimumAmount: pricing.minimumAmountOut,
          expectedAmount: pricing.amountOut,
        },
      ],
      calls: route.calls.map((call) => encodeCall(call)),
      deadline,
      extraData: '0x',
    },
    fees,
  };
  const orderId = orderIdOf(orderData);
  const requestId = requestIdOf(orderId, route.origin.id);
  return {
    requestId,
    order: {
      orderId,
      hubType: 'onchain',
      orderData,
      paymentDetails: {
        chainId: originId,
        depository: route.origin.contracts.depository,
        currency: currencyIn,
        amount: pricing.amountIn,
      },
    },
  };
}
