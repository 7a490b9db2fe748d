import type { QueryResolvers } from '../../../generated/graphql/resolvers.js';
import { isGatewayError } from '../../core/errors.js';
import { getRequestSignature } from '../../core/requests/getRequestSignature.js';

/**
 * `Query.requestSignature` (operation `getRequestSignature`): the same attestation as REST; null for an unknown
 * request (the schema's nullable answer where REST says 404). A malformed id is `INVALID_INPUT`.
 */
export const requestSignature: QueryResolvers['requestSignature'] = async (_parent, { requestId }, { core }) => {
  try {
    const { requestData, signature } = await getRequestSignature(core, { requestId });
    return { requestData, signature };
  } catch (error) {
    if (isGatewayError(error) && error.code === 'NOT_FOUND') return null;
    throw error;
  }
};
