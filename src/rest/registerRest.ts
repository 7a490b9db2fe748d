import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  operations,
  type OperationHandlers,
  type OperationId,
  type OperationInput,
  type OperationSpec,
} from '../../generated/openapi/operations.js';
import type { OperationRouteConfig } from './rateLimit.js';
import { IGNORED_FIELDS_HEADER } from './unknownFields.js';
import { createValidators } from './validation.js';

/** Operations never rate limited: probes must answer however busy the gateway is. */
const unlimitedOperations = new Set<OperationId>(['getHealth', 'getReadiness']);

/**
 * Binds every operation of the contract to Fastify: the route comes from the operation table, the request is
 * validated against the contract before the handler runs, and the handler's declared response is sent as is.
 */
export function registerRest<Context>(
  app: FastifyInstance,
  handlers: OperationHandlers<Context>,
  contextOf: (request: FastifyRequest) => Context,
): void {
  const validators = createValidators(operations);
  for (const [id, spec] of Object.entries(operations) as Array<[OperationId, OperationSpec]>) {
    const handler = handlers[id].bind(handlers) as (
      input: OperationInput<OperationId>,
      context: Context,
    ) => Promise<{
      status: number | string;
      body: unknown;
      headers?: Record<string, string>;
    }>;
    const validator = validators[id];
    app.route({
      method: spec.method,
      url: spec.path.replace(/\{([^}]+)\}/g, ':$1'),
      config: {
        operationId: id,
        // Admin operations authenticate with the admin token, not a key: they count per client address.
        ...(unlimitedOperations.has(id)
          ? { rateLimit: 'exempt' }
          : spec.path.startsWith('/admin/')
            ? { rateLimit: 'address' }
            : {}),
      } satisfies OperationRouteConfig,
      handler: async (request, reply) => {
        const parts = { query: request.query, params: request.params, headers: request.headers, body: request.body };
        validator.validateRequest(parts, (ignoredFields) => {
          // Set before anything can fail, so a refused answer also names what was ignored.
          reply.header(IGNORED_FIELDS_HEADER, ignoredFields.join(', '));
          request.log.debug({ operationId: id, ignoredFields }, 'ignored unknown body fields');
        });
        const output = await handler(parts as OperationInput<OperationId>, contextOf(request));
        if (output.headers) reply.headers(output.headers);
        return reply.status(Number(output.status)).send(output.body);
      },
    });
  }
}
