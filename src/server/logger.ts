import pino, { type DestinationStream, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { GatewayConfig } from './config.js';

/** `scheme://[userinfo@]host[:port]` then the rest of the URL, as it appears in a serialised log line. */
const urlPattern = /\b(https?|wss?):\/\/(?:[^\s"'@/\\]*@)?([^\s"'/?#\\]+)([^\s"'\\]*)/gi;

/**
 * Replaces the credentials, path and query of every URL in `text` with `[redacted]`, keeping scheme and host.
 * RPC providers put their API keys in exactly those parts (`/v3/<key>`, `?apikey=`, `user:pass@`), and viem's
 * errors quote the URL of the failed request in their message and fields.
 */
function redactUrls(text: string): string {
  return text.replace(urlPattern, (_match, scheme: string, host: string, rest: string) =>
    rest === '' || rest === '/' ? `${scheme}://${host}${rest}` : `${scheme}://${host}/[redacted]`,
  );
}

/**
 * The gateway's pino logger.
 *
 * - Every line is redacted as the last step before it is written (`redactUrls`), so no error message, serialised
 *   error, field or message text can carry an RPC URL, wherever it was logged from.
 * - `json` (the default when stdout is not a terminal) writes one JSON object a line, for log shippers; `pretty`
 *   (the default in a terminal) writes one readable line per entry: time, level, the request id when the entry
 *   has one, the message, then the other fields. Every entry of a request's lifecycle (quote, deposit seen and
 *   confirmed, transactions broadcast and mined, status changes, webhooks) carries `requestId`, so
 *   `grep <requestId>` follows one request in either format.
 */
export function createLogger(
  config: Pick<GatewayConfig, 'logLevel' | 'logFormat'>,
  destination?: DestinationStream,
): Logger {
  const options = { level: config.logLevel, base: { service: 'intent-gateway' }, hooks: { streamWrite: redactUrls } };
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
