import type { JsonObject } from '../../records/json.js';

/**
 * `details` of a status record as the reference sends it: text. A recorded message is itself; any other
 * object is its JSON. The reference's SDK prints `details` while it polls a signature step, so an object
 * would show as "[object Object]".
 */
export function detailsText(details: JsonObject | null): string | null {
  if (details === null) return null;
  const keys = Object.keys(details);
  if (keys.length === 1 && typeof details.message === 'string') return details.message;
  return JSON.stringify(details);
}
