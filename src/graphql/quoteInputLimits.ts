import type { QuoteInput } from '../../generated/graphql/resolvers.js';
import { GatewayError } from '../core/errors.js';

/**
 * The maxima `schema/openapi.yaml` puts on the body of `POST /quote/v2`, applied to GraphQL's `QuoteInput`
 * (GraphQL's types cannot say them): without them one GraphQL quote could carry more calls, fees or label than
 * REST ever admits. Throws `INVALID_INPUT` naming the field, as REST's validation does.
 */
export function checkQuoteInputLimits(input: QuoteInput): void {
  const refuse = (field: string, rule: string): never => {
    throw new GatewayError('INVALID_INPUT', `${field} ${rule}`, { data: field });
  };
  if (input.originCurrency.length > 128) refuse('originCurrency', 'must be at most 128 characters');
  if (input.destinationCurrency.length > 128) refuse('destinationCurrency', 'must be at most 128 characters');
  if (input.referrer != null && input.referrer.length > 256) refuse('referrer', 'must be at most 256 characters');
  if (input.txs != null) {
    if (input.txs.length > 100) refuse('txs', 'must have at most 100 items');
    for (const [i, tx] of input.txs.entries()) {
      if (tx.data.length > 262_146) refuse(`txs.${i}.data`, 'must be at most 262146 characters');
    }
  }
  if (input.appFees != null) {
    if (input.appFees.length > 20) refuse('appFees', 'must have at most 20 items');
    for (const [i, fee] of input.appFees.entries()) {
      if (fee.fee < 0 || fee.fee > 99_999) refuse(`appFees.${i}.fee`, 'must be an integer from 0 to 99999');
    }
  }
  if (input.permitExpiry != null && (input.permitExpiry < 1 || input.permitExpiry > 604_800)) {
    refuse('permitExpiry', 'must be an integer from 1 to 604800');
  }
  if (input.sponsoredFeeComponents != null && input.sponsoredFeeComponents.length > 6)
    refuse('sponsoredFeeComponents', 'must have at most 6 items');
}
