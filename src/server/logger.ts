import pino, { type DestinationStream, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { GatewayConfig } from './config.js';

/**
 * The gateway's pino logger. `json` (the default when stdout is not a terminal) writes one JSON object a line,
 * for log shippers; `pretty` (the default in a terminal) writes one readable line per entry: time, level, the
 * request id when the entry has one, the message, then the other fields. Every entry of a request's lifecycle
 * (quote, deposit seen and confirmed, transactions broadcast and mined, status changes, webhooks) carries
 * `requestId`, so `grep <requestId>` follows one request in either format.
 */
export function createLogger(config: Pick<GatewayConfig, 'logLevel' | 'logFormat'>, destination?: DestinationStream): Logger {
  const options = { level: config.logLevel, base: { service: 'intent-gateway' } };
  if (config.logFormat !== 'pretty') return destination === undefined ? pino(options) : pino(options, destination);
  return pino(
    options,
    pinoPretty({
      colorize: destination === undefined && process.stdout.isTTY === true,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,service,requestId',
      messageFormat: '{if requestId}{requestId} {end}{msg}',
      ...(destination === undefined ? { sync: true } : { destination: destination as NodeJS.WritableStream }),
    }),
  );
}
