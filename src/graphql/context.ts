import { authenticate } from '../core/apiKeys/authenticate.js';
import type { CoreContext } from '../core/context.js';
import type { Caller } from '../core/vocabulary/caller.js';

/** What every resolver receives: the core and the caller's identity, resolved by the transport. */
export interface GraphQLContext {
  core: CoreContext;
  /** The caller's `x-api-key` (HTTP header, or graphql-ws connection params / upgrade header). */
  apiKey?: string;
  /**
   * Who is calling: the key is looked up once per operation, on the first resolver that asks (a query that needs
   * no caller never looks it up, and an invalid key fails only the fields that need one, with `UNAUTHORIZED`).
   */
  caller: () => Promise<Caller>;
  /**
   * Admin fields (`inventory`): the configured admin token and the request's `Authorization` header, checked by
   * the core's `authorizeAdmin` as REST does. The header is read over HTTP only.
   */
  admin: { token: string | undefined; authorization: string | undefined };
}

/** The resolvers' context for one operation. */
export function graphQLContext(
  core: CoreContext,
  apiKey: string | undefined,
  admin: GraphQLContext['admin'] = { token: undefined, authorization: undefined },
): GraphQLContext {
  let caller: Promise<Caller> | undefined;
  return {
    core,
    ...(apiKey === undefined ? {} : { apiKey }),
    caller: () => (caller ??= authenticate(core, apiKey)),
    admin,
  };
}
