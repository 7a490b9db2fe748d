import { abortError, type RpcRequestInit, type RpcResponse } from './nodeFetch.js';

export type RpcFetch = (url: string | URL, init?: RpcRequestInit) => Promise<RpcResponse>;

export interface RateLimitBackoffOptions {
  /**
   * Whether the chain has other endpoints (a `fallback` transport): a cooling endpoint then answers 429 at once,
   * without a request, so the next endpoint serves; alone, a request waits for the cool-down and is sent again.
   */
  alternatives: boolean;
  /** Requests a 429 is tried for, in all (alone). Default 4. */
  maxAttempts?: number;
  /** The first cool-down without a `Retry-After`, doubled for each 429 in a row up to `maxDelayMs`. Default 500. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * A provider's 429 (rate limited) is a back-off, not a failure: the endpoint cools down for the `Retry-After` it
 * gave (seconds or an HTTP date) or, without one, a doubling delay from `baseDelayMs` (reset by an answer that is
 * not a 429), and no request goes to it meanwhile. Alone, a rate-limited request waits and is sent again (bounded
 * by `maxAttempts` and by viem's timeout, whose abort ends the wait); with alternatives, it is answered 429 so the
 * next endpoint serves it. Hammering a provider that asked us to slow down only lengthens its limit.
 */
export function withRateLimitBackoff(fetchFn: RpcFetch, options: RateLimitBackoffOptions): RpcFetch {
  const { alternatives, maxAttempts = 4, baseDelayMs = 500, maxDelayMs = 30_000 } = options;
  const endpoints = new Map<string, { coolUntil: number; strikes: number }>();
  return async (url, init) => {
    const key = String(url);
    let state = endpoints.get(key);
    if (state === undefined) endpoints.set(key, (state = { coolUntil: 0, strikes: 0 }));
    for (let attempt = 1; ; attempt++) {
      const wait = state.coolUntil - Date.now();
      if (wait > 0) {
        if (alternatives) return coolingDown(wait);
        await sleep(wait, init?.signal ?? null);
      }
      const response = await fetchFn(url, init);
      if (response.status !== 429) {
        state.strikes = 0;
        return response;
      }
      state.strikes++;
      const delay = retryAfterMs(response) ?? Math.min(maxDelayMs, baseDelayMs * 2 ** (state.strikes - 1));
      state.coolUntil = Date.now() + Math.min(delay, maxDelayMs);
      if (alternatives || attempt >= maxAttempts) return response;
    }
  };
}

function retryAfterMs(response: RpcResponse): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** The answer of an endpoint that is cooling down: a 429 of our own, so the fallback moves on. */
function coolingDown(waitMs: number): RpcResponse {
  const retryAfter = String(Math.ceil(waitMs / 1000));
  return {
    ok: false,
    status: 429,
    statusText: 'Too Many Requests (cooling down after a 429)',
    headers: { get: (name: string) => (name.toLowerCase() === 'retry-after' ? retryAfter : null) },
    body: null,
    text: async () => '',
  };
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
