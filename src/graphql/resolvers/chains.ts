import { getChains } from '../../core/chains/getChains.js';
import type { QueryResolvers } from '../../../generated/graphql/resolvers.js';

/** `Query.chains` (operation `getChains`): the catalogue, hidden chains named in `includeChains` included. */
export const chains: QueryResolvers['chains'] = (_parent, { includeChains }, { core }) =>
  getChains(core, { includeChains: includeChains?.join(',') ?? null });

/** `Query.chain` (operation `getChains`): one chain by id, hidden or not; null when not configured. */
export const chain: QueryResolvers['chain'] = (_parent, { id }, { core }) =>
  getChains(core, { includeChains: String(id) }).find((candidate) => candidate.id === id) ?? null;
