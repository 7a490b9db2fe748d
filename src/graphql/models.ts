import type { Caller } from '../core/vocabulary/caller.js';
import type { GetRequestsParameters, GetRequestsReturnType } from '../core/requests/getRequests.js';

// Objects resolvers hand to the field resolvers of a GraphQL type where no core type fits (codegen's mappers
// point here; this module imports nothing generated, so the generated resolver types form no circle with it).

/** What `Query.requests` hands to the `RequestConnection` fields: the page, and how to count all pages. */
export interface RequestConnectionModel {
  page: GetRequestsReturnType;
  params: GetRequestsParameters;
  caller: Caller;
}
