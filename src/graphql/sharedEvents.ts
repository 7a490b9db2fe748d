import {
  createSourceEventStream,
  execute,
  getOperationAST,
  getVariableValues,
  OperationTypeNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { createGraphQLError, isAsyncIterable, mapAsyncIterator, type Plugin, type PromiseOrValue } from 'graphql-yoga';

/** Source events that every subscriber of a change receives as one object (see `shareEvent`). */
const shareable = new WeakSet<object>();

/**
 * Marks a subscription's source event as shared: the stream hands this same object to every subscriber that is to
 * see the same thing (one object per change and view: `toStatusUpdate`), and what a document renders from it
 * depends on the event, the schema, the document, the operation and the variables alone (no resolver under it
 * reads the context). Its execution result is then computed once per (event, schema, document, operation,
 * variables) and handed to every such subscriber. Returns `event`.
 */
export function shareEvent<T extends object>(event: T): T {
  shareable.add(event);
  return event;
}

type Results = Map<string, PromiseOrValue<ExecutionResult>>;
/** Per shared event: per schema, per parsed document (yoga's parse cache hands one object per query text). */
const executed = new WeakMap<object, WeakMap<GraphQLSchema, WeakMap<DocumentNode, Results>>>();

function resultsOf(event: object, schema: GraphQLSchema, document: DocumentNode): Results {
  let bySchema = executed.get(event);
  if (bySchema === undefined) executed.set(event, (bySchema = new WeakMap()));
  let byDocument = bySchema.get(schema);
  if (byDocument === undefined) bySchema.set(schema, (byDocument = new WeakMap()));
  let results = byDocument.get(document);
  if (results === undefined) byDocument.set(document, (results = new Map<string, PromiseOrValue<ExecutionResult>>()));
  return results;
}

type SubscribeFn = (args: ExecutionArgs & { signal?: AbortSignal }) => PromiseOrValue<unknown>;

/**
 * An envelop plugin: a subscription executes each shared source event (`shareEvent`) once for all the
 * subscribers with the same document, operation and variables, instead of once per subscriber. The rest is
 * the executor's: the subscription's own `subscribe` resolver (auth, not-found) runs once per subscriber as
 * before, other plugins' hooks still see every result, and an event that is not shared is executed per
 * subscriber. Operations it cannot take as they are (variables that do not coerce, no single operation, an abort
 * signal, as HTTP's event streams carry) go to the executor's own `subscribe` unchanged.
 */
export function sharedSubscriptionEvents(): Plugin {
  return {
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      const fallback = subscribeFn as SubscribeFn;
      setSubscribeFn(((args: ExecutionArgs & { signal?: AbortSignal }) => subscribeShared(args, fallback)) as never);
    },
  };
}

function subscribeShared(
  args: ExecutionArgs & { signal?: AbortSignal },
  fallback: SubscribeFn,
): PromiseOrValue<unknown> {
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation || operation.operation !== OperationTypeNode.SUBSCRIPTION || args.signal !== undefined)
    return fallback(args);
  const variables = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
  if (variables.errors !== undefined) return fallback(args);
  // Computed once per subscription: the variables are the client's own, fixed for its life.
  const key = `${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? null)}`;
  const executeEvent = (event: unknown): PromiseOrValue<ExecutionResult> => {
    if (typeof event !== 'object' || event === null || !shareable.has(event)) {
      return execute({ ...args, rootValue: event });
    }
    const results = resultsOf(event, args.schema, args.document);
    let result = results.get(key);
    if (result === undefined) {
      result = execute({ ...args, rootValue: event });
      results.set(key, result);
    }
    return result;
  };
  const toResponse = (source: AsyncIterable<unknown> | ExecutionResult): unknown =>
    isAsyncIterable(source)
      ? mapAsyncIterator(source, executeEvent, (error: unknown) => {
          // As the executor's own subscribe reports an error of the source stream.
          if (error instanceof AggregateError) {
            throw new AggregateError(
              error.errors.map((inner: unknown) => located(inner, operation)),
              error.message,
            );
          }
          throw located(error, operation);
        })
      : source;
  const source = createSourceEventStream(args);
  return source instanceof Promise ? source.then(toResponse) : toResponse(source);
}

function located(error: unknown, operation: OperationDefinitionNode): Error {
  const original = error instanceof Error ? error : new Error(String(error));
  return createGraphQLError(original.message, { originalError: original, nodes: [operation] });
}
