import type { CoreContext } from '../core/context.js';

/** What every resolver receives: the core and the caller's identity, resolved by the transport. */
export interface GraphQLContext {
  core: CoreContext;
  /** The caller's `x-api-key` (HTTP header, or graphql-ws connection params / upgrade header). */
  apiKey?: string;
}
