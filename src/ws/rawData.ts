import type { RawData } from 'ws';

/**
 * A websocket message as text. `ws` types a message as a Buffer, an ArrayBuffer or a list of Buffers (which one
 * depends on the socket's `binaryType`); each is read as UTF-8, where `String(data)` would not be for the last two.
 */
export function rawDataText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
