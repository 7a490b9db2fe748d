import type { WebSocket } from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import type { OperationResult } from 'graphql-ws';
import { makeHandler } from 'graphql-ws/use/@fastify/websocket';
import { isGatewayError } from '../core/errors.js';
import type { SocketGuard } from '../ws/socketGuard.js';
import type { GatewayGraphQL, GatewayYoga } from './createGraphQL.js';
import { toGraphQLError } from './errors.js';

/** WebSocket close code 1001: the server is going away. */
const goingAway = 1001;

export interface RegisterGraphQLOptions {
  /** graphql-ws keep-alive: ping interval, and how long a pong may take, in ms (0 disables). Default: 12 000. */
  keepAlive?: number;
  /** Connection cap per client, rate limit per subscribe message, subscription cap, slow consumers dropped. */
  guard?: SocketGuard;
}

/** Closes every graphql-ws connection (code 1001) and refuses new ones. Idempotent. */
export type DisposeGraphQL = () => Promise<void>;

/**
 * What graphql-ws keeps per operation: yoga's enveloped `execute`/`subscribe`, carried in `rootValue`. Envelop
 * declares them (and `parse`/`validate`) loosely; these are the signatures graphql-ws calls them with.
 */
interface EnvelopedRoot {
  execute: (args: ExecutionArgs) => OperationResult;
  subscribe: (args: ExecutionArgs) => OperationResult;
}
type Enveloped = ReturnType<GatewayYoga['getEnveloped']>;

/** `x-api-key` of a graphql-ws connection: `connection_init` payload `{ apiKey }` (browsers), else the upgrade header. */
function apiKeyOf(
  connectionParams: Readonly<Record<string, unknown>> | undefined,
  request: FastifyRequest,
): string | undefined {
  const fromParams = connectionParams?.['apiKey'] ?? connectionParams?.['x-api-key'];
  if (typeof fromParams === 'string' && fromParams !== '') return fromParams;
  const header = request.headers['x-api-key'];
  return typeof header === 'string' && header !== '' ? header : undefined;
}

/**
 * Mounts GraphQL on `app` at `/graphql`, on the same port as REST:
 * - HTTP `GET`, `POST` and `OPTIONS` are answered by yoga (queries, mutations, CORS preflight, GraphiQL);
 * - a websocket upgrade on `GET /graphql` speaks graphql-ws (`graphql-transport-ws`) through yoga's envelop,
 *   so both transports share the schema, context and error mapping.
 *
 * Requires `@fastify/websocket` to be registered on `app` beforehand (`await app.register(websocket)`): it
 * allows a `wsHandler` only on a GET route, hence one GET route with both handlers and one POST/OPTIONS route.
 * The routes live in an encapsulated plugin whose only content-type parser passes bodies through untouched
 * (yoga reads and limits them itself); the JSON parsing of every other route is unaffected.
 *
 * Resolves, once the routes are registered, with the function that disposes the graphql-ws side: call it
 * before `app.close()` so clients see 1001 "going away" (app.close() alone ends them too, through
 * @fastify/websocket's own pre-close hook, but with no close code).
 */
export async function registerGraphQL(
  app: FastifyInstance,
  graphql: GatewayGraphQL,
  options: RegisterGraphQLOptions = {},
): Promise<DisposeGraphQL> {
  if (!app.hasDecorator('websocketServer')) {
    throw new Error('registerGraphQL: register @fastify/websocket on the app first (await app.register(websocket))');
  }
  const { yoga } = graphql;
  const { guard } = options;
  const sockets = new Set<WebSocket>();
  /** Operation ids live (or being set up) per connection: the slot is taken before the first await. */
  const operations = new WeakMap<object, Set<string>>();
  let disposing: Promise<void> | null = null;

  const graphqlWs = makeHandler<Record<string, unknown>>(
    {
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args),
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args),
      onSubscribe: async (ctx, id, payload) => {
        if (guard !== undefined) {
          try {
            await guard.admit(apiKeyOf(ctx.connectionParams, ctx.extra.request), ctx.extra.request.ip);
          } catch (error) {
            if (isGatewayError(error)) return [toGraphQLError(error)];
            throw error;
          }
          // Taken before the next await, so a burst cannot pass the cap.
          const live = operations.get(ctx) ?? new Set<string>();
          operations.set(ctx, live);
          if (live.size >= guard.maxSubscriptions) {
            return [
              new GraphQLError(`At most ${guard.maxSubscriptions} operations per connection`, {
                extensions: { code: 'INVALID_INPUT', status: 400 },
              }),
            ];
          }
          live.add(id);
        }
        const enveloped = yoga.getEnveloped({
          apiKey: apiKeyOf(ctx.connectionParams, ctx.extra.request),
          params: payload,
        });
        let document: DocumentNode;
        try {
          document = enveloped.parse(payload.query) as DocumentNode;
        } catch (error) {
          operations.get(ctx)?.delete(id);
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        const errors = enveloped.validate(enveloped.schema, document) as readonly GraphQLError[];
        if (errors.length > 0) {
          operations.get(ctx)?.delete(id);
          return errors;
        }
        const root: EnvelopedRoot = {
          execute: enveloped.execute as Enveloped['execute'] & EnvelopedRoot['execute'],
          subscribe: enveloped.subscribe as Enveloped['subscribe'] & EnvelopedRoot['subscribe'],
        };
        return {
          schema: enveloped.schema as GraphQLSchema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: root,
        };
      },
      onComplete: (ctx, id) => {
        operations.get(ctx)?.delete(id);
      },
    },
    options.keepAlive,
  );

  const dispose: DisposeGraphQL = () => {
    disposing ??= Promise.all([...sockets].map((socket) => closeSocket(socket))).then(() => undefined);
    return disposing;
  };

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

    scope.route({
      method: 'GET',
      url: '/graphql',
      handler: (request, reply) => handleWithYoga(yoga, request, reply),
      wsHandler: function (socket, request) {
        if (disposing) {
          socket.close(goingAway, 'Server is shutting down');
          return;
        }
        if (guard !== undefined && !guard.open(socket, request.ip)) return;
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        return graphqlWs.call(this, socket, request);
      },
    });
    scope.route({
      method: ['POST', 'OPTIONS'],
      url: '/graphql',
      handler: (request, reply) => handleWithYoga(yoga, request, reply),
    });
  });
  return dispose;
}

/** Yoga's documented Fastify integration: yoga answers from the raw request; the reply carries its response. */
async function handleWithYoga(yoga: GatewayYoga, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const response = await yoga.handleNodeRequestAndResponse(request, reply, {});
  response.headers.forEach((value, key) => {
    reply.header(key, value);
  });
  reply.status(response.status);
  return reply.send(response.body);
}

/** Closes a socket as "going away" and waits for the close handshake (terminating it after 1 s). */
function closeSocket(socket: WebSocket): Promise<void> {
  if (socket.readyState === socket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => socket.terminate(), 1_000);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.close(goingAway, 'Server is shutting down');
  });
}
