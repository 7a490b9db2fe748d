import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getChains as getChainsCore } from '../../core/chains/getChains.js';
import type { Chain } from '../../core/chains/types.js';
import type { RestContext } from '../context.js';

type WireChain = Extract<OperationOutput<'getChains'>, { status: 200 }>['body']['chains'][number];

/** The wire form of a catalogue entry: only `partialDisableLimit` changes type (bigint -> number). */
function toWireChain(chain: Chain): WireChain {
  return { ...chain, partialDisableLimit: Number(chain.partialDisableLimit) };
}

/** GET /chains */
export async function getChains(
  input: OperationInput<'getChains'>,
  context: RestContext,
): Promise<OperationOutput<'getChains'>> {
  const chains = getChainsCore(context.core, { includeChains: input.query.includeChains });
  return { status: 200, body: { chains: chains.map(toWireChain) } };
}
