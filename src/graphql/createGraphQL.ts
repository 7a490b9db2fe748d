import { readFileSync } from 'node:fs';
import { GraphQLScalarType, Kind, parse, type GraphQLSchema } from 'graphql';
import { createSchema, createYoga, type YogaLogger, type YogaServerInstance } from 'graphql-yoga';
import type { CoreContext } from '../core/context.js';
import type { Logger } from '../core/logger.js';
import { graphQLContext, type GraphQLContext } from './context.js';
import { defaultDocumentLimits, documentLimitPlugins, type DocumentLimits } from './documentLimits.js';
import { toGraphQLError } from './errors.js';
import { guardResolvers } from './guardResolvers.js';
import { createResolvers } from './resolvers/index.js';
import { sharedSubscriptionEvents } from './sharedEvents.js';

/**
 * GraphiQL's page, loaded on its first request. The package is one 18-million-character module (GraphiQL and
 * Monaco inlined): loaded at start it held about 29 MiB of strings in the heap of every gateway, and tsx's import
 * lexer grew a 32 MiB buffer to read it, about a sixth of an idle devnet gateway's RSS, for a page most
 * deployments never serve.
 */
let graphiql: Promise<typeof import('@graphql-yoga/render-graphiql')> | undefined;
const loadGraphiQL = () => (graphiql ??= import('@graphql-yoga/render-graphiql'));

/** The contract, read when a server is created (not at import time). */
const schemaFile = new URL('../../schema/schema.graphql', import.meta.url);

/**
 * What a transport adds to yoga's initial context. Over HTTP yoga builds `request` itself; graphql-ws has no
 * fetch `Request`, so registerGraphQL passes the caller's API key instead.
 */
export interface GraphQLServerContext {
  apiKey?: string | undefined;
}

export type GatewayYoga = YogaServerInstance<GraphQLServerContext, GraphQLContext>;

export interface CreateGraphQLOptions {
  core: CoreContext;
  /** Where unexpected errors and yoga's own messages go. Default: `core.log`. */
  logger?: Logger;
  /** Serve GraphiQL (subscriptions over graphql-ws) to browsers on `GET /graphql`. Default: false. */
  graphiql?: boolean;
  /** Largest request body yoga reads, in bytes. Default: 1 MiB (Fastify's default body limit). */
  maxRequestBodySize?: number;
  /** The admin token (`GATEWAY_ADMIN_TOKEN`) the admin fields require, as REST; absent: they answer `NOT_FOUND`. */
  adminToken?: string | undefined;
  /** Depth, alias, cost, token and directive limits of a document. Default: `defaultDocumentLimits`. */
  documentLimits?: Partial<DocumentLimits>;
}

export interface GatewayGraphQL {
  yoga: GatewayYoga;
  schema: GraphQLSchema;
}

/**
 * The GraphQL API over the core: the executable schema (schema/schema.graphql + resolvers typed by codegen) and
 * a graphql-yoga server for `/graphql`. Mount it with `registerGraphQL`. Errors leave through `toGraphQLError`:
 * gateway errors keep their code, anything unexpected is logged and masked as `Unexpected error.`.
 */
export function createGraphQL(options: CreateGraphQLOptions): GatewayGraphQL {
  const { core } = options;
  const log = options.logger ?? core.log;
  const typeDefs = parse(readFileSync(schemaFile, 'utf8'));
  const schema = createSchema<GraphQLContext>({ typeDefs, resolvers: createResolvers() });
  keepSchemaScalarDescriptions(schema, typeDefs);
  guardResolvers(schema, log);

  const yoga = createYoga<GraphQLServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: options.graphiql ? { subscriptionsProtocol: 'WS', title: 'Intent gateway' } : false,
    // GraphiQL's code and styles inlined from the npm package (yoga's default page loads them from a CDN): works offline.
    renderGraphiQL: async (graphiqlOptions) => (await loadGraphiQL()).renderGraphiQL(graphiqlOptions),
    logging: yogaLogger(log),
    // Errors thrown by resolvers were mapped by guardResolvers already; this catches the rest (context, plugins).
    maskedErrors: { maskError: (error) => toGraphQLError(error) },
    maxRequestBodySize: options.maxRequestBodySize ?? 1_048_576,
    // One operation per HTTP request: a batch would multiply the work a single request (and its rate limit) admits.
    batching: false,
    plugins: [
      ...documentLimitPlugins({ ...defaultDocumentLimits, ...options.documentLimits }),
      // A status change executes each subscription document once, not once per subscriber.
      sharedSubscriptionEvents(),
    ],
    context: (initial): GraphQLContext =>
      graphQLContext(
        core,
        // `request` is absent on graphql-ws operations, which bring `apiKey` instead (see GraphQLServerContext).
        initial.apiKey ?? (initial.request?.headers.get('x-api-key') || undefined),
        {
          token: options.adminToken,
          authorization: initial.request?.headers.get('authorization') ?? undefined,
        },
      ),
  });
  return { yoga, schema };
}

/**
 * graphql-tools copies a scalar implementation's own description (graphql-scalars' wording, or none) over
 * the SDL's; the contract's description is the one clients should see.
 */
function keepSchemaScalarDescriptions(schema: GraphQLSchema, typeDefs: ReturnType<typeof parse>): void {
  for (const definition of typeDefs.definitions) {
    if (definition.kind !== Kind.SCALAR_TYPE_DEFINITION) continue;
    const type = schema.getType(definition.name.value);
    if (type instanceof GraphQLScalarType) type.description = definition.description?.value;
  }
}

/** Yoga's `(...args)` logger over the core's structured one. */
function yogaLogger(log: Logger): YogaLogger {
  const forward =
    (write: (obj: object, msg?: string) => void) =>
    (...args: unknown[]): void => {
      const [first, ...rest] = args;
      const extra = rest.length > 0 ? { args: rest } : {};
      if (first instanceof Error) write({ err: first, ...extra }, first.message);
      else if (typeof first === 'string') write(extra, first);
      else write({ args }, 'graphql-yoga');
    };
  return {
    debug: forward((obj, msg) => log.debug(obj, msg)),
    info: forward((obj, msg) => log.info(obj, msg)),
    warn: forward((obj, msg) => log.warn(obj, msg)),
    error: forward((obj, msg) => log.error(obj, msg)),
  };
}
