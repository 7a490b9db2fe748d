import pino, { type DestinationStream, type Logger } from 'pino';

/** `scheme://[userinfo@]host[:port]` then the rest of the URL, as it appears in a serialised log line. */
const urlPattern = /\b(https?|wss?):\/\/(?:[^\s"'@/\\]*@)?([^\s"'/?#\\]+)([^\s"'\\]*)/gi;

/**
 * Replaces the credentials, path and query of every URL in `text` with `[redacted]`, keeping scheme and host.
 * RPC providers put their API keys in exactly those parts (`/v3/<key>`, `?apikey=`, `user:pass@`), and viem's
 * errors quote the URL of the failed request in their message and fields.
 */
export function redactUrls(text: string): string {
  return text.replace(urlPattern, (_match, scheme: string, host: string, rest: string) =>
    rest === '' || rest === '/' ? `${scheme}://${host}${rest}` : `${scheme}://${host}/[redacted]`,
  );
}

export interface CreateLoggerOptions {
  level: string;
  /** Where lines go; default stdout. */
  destination?: DestinationStream;
}

/**
 * The gateway's pino logger. Every line is redacted as the last step before it is written (`redactUrls`), so
 * no error message, serialised error, field or message text can carry an RPC URL, wherever it was logged from.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const settings = { level: options.level, base: { service: 'intent-gateway' }, hooks: { streamWrite: redactUrls } };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}
