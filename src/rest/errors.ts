import type { FastifyError, FastifyInstance } from 'fastify';
import { GatewayError, isGatewayError } from '../core/errors.js';

/** The reference's error body. `statusCode` repeats the HTTP status because the reference SDK reads it from the body. */
export interface ErrorBody {
  message: string;
  errorCode: string;
  errorData?: string;
  statusCode: number;
}

function toErrorBody(error: GatewayError): ErrorBody {
  return {
    ...error.body,
    message: error.message,
    errorCode: error.code,
    ...(error.data === undefined ? {} : { errorData: error.data }),
    statusCode: error.status,
  };
}

/** Fastify's own errors (parsing, limits) as the gateway errors a client can act on. */
function fromFastifyError(error: FastifyError): GatewayError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('PAYLOAD_TOO_LARGE', 'Request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('INVALID_INPUT', 'Body is empty but Content-Type is application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('INVALID_INPUT', error.message);
    default:
      break;
  }
  if (error instanceof SyntaxError || error.name === 'SyntaxError') {
    return new GatewayError('INVALID_INPUT', `Malformed JSON body: ${error.message}`);
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new GatewayError('INVALID_INPUT', error.message);
  }
  return null;
}

/**
 * The one place REST maps failures to HTTP: gateway errors keep their status and code, framework errors a
 * client caused become 4xx, everything else is logged and leaves as a masked 500 `UNKNOWN_ERROR`.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = isGatewayError(error) ? error : fromFastifyError(error);
    if (known) {
      if (known.status >= 500) request.log.warn({ err: error, errorCode: known.code }, known.message);
      return reply.status(known.status).send(toErrorBody(known));
    }
    request.log.error({ err: error }, 'unexpected error');
    return reply.status(500).send(toErrorBody(new GatewayError('UNKNOWN_ERROR', 'Unexpected error')));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new GatewayError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`);
    return reply.status(404).send(toErrorBody(error));
  });
}
