import {
  type GraphQLFieldResolver,
  type GraphQLSchema,
  isObjectType,
  locatedError,
  responsePathAsArray,
} from 'graphql';
import { isPromise } from 'graphql-yoga';
import type { Logger } from '../core/logger.js';
import { toGraphQLError } from './errors.js';

/**
 * Passes whatever a resolver (or a subscription's `subscribe`) throws through `toGraphQLError` at the resolver
 * boundary, in place on `schema`. Yoga's own masking then sees only deliberate GraphQLErrors, so an expected
 * `GatewayError` is neither masked nor logged as a failure, and an unexpected error is logged once, with its path.
 */
export function guardResolvers(schema: GraphQLSchema, log: Logger): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.resolve) field.resolve = guard(field.resolve, log);
      if (field.subscribe) field.subscribe = guard(field.subscribe, log);
    }
  }
}

function guard<TSource, TContext>(
  resolve: GraphQLFieldResolver<TSource, TContext>,
  log: Logger,
): GraphQLFieldResolver<TSource, TContext> {
  return (source, args, context, info) => {
    const fail = (error: unknown): never => {
      throw toGraphQLError(locatedError(error, info.fieldNodes, responsePathAsArray(info.path)), log);
    };
    try {
      const result: unknown = resolve(source, args, context, info);
      return isPromise(result) ? result.then(undefined, fail) : result;
    } catch (error) {
      return fail(error);
    }
  };
}
