import { HttpRequestError, toHex, type Transport } from 'viem';

/**
 * Whether an `eth_getLogs` failure is the provider refusing the size of the query (too many blocks, or too many
 * results), which a smaller range answers, rather than an outage or a rate limit, which it does not. Providers
 * word it differently: "query returned more than 10000 results" (Infura, Alchemy, -32005), "block range is too
 * wide" / "exceed maximum block range: 5000" / "eth_getLogs is limited to a 10,000 range" (QuickNode, Ankr,
 * public nodes), "Log response size exceeded"
 * (Alchemy), "query exceeds max results" / "limit exceeded" (-32005 and -32602 variants), or HTTP 413.
 */
export function isLogRangeRefusal(error: unknown): boolean {
  const messages: string[] = [];
  for (let cause: unknown = error; cause instanceof Error && messages.length < 8; cause = cause.cause) {
    messages.push(cause.message, (cause as { details?: string }).details ?? '');
    if (cause instanceof HttpRequestError && cause.status === 413) return true;
  }
  const text = messages.join('\n');
  if (/rate limit|too many requests|exceeded .*(quota|capacity|compute units)/i.test(text)) return false;
  return /block range|limited to (a )?[\d,]+ (block )?range|range (is )?too (large|wide|big)|exceed(s|ed)? (the )?max(imum)? (block )?range|more than \d+ (results|logs)|too many (results|logs)|max(imum)? (number of )?results|response size (exceeded|is too)|logs? .*limit exceeded|query timeout exceeded/i.test(
    text,
  );
}

/** Ranges are halved down to this many blocks at most; a single block that is refused fails the read. */
const MAX_SPLIT_DEPTH = 24;

type Request = (args: { method: string; params?: unknown }, options?: unknown) => Promise<unknown>;

/**
 * `eth_getLogs` over `fromBlock..toBlock` that splits a range the provider refuses (`isLogRangeRefusal`) in
 * halves, reading each half the same way, and answers the logs in block order as one read would. Ranges are
 * kept as the caller chose them when the provider accepts them: the watchers' 2,000-block ranges cost one
 * request wherever they are allowed. A query by block hash or by tag is passed through.
 */
async function getLogsInParts(request: Request, filter: LogFilter, options: unknown, depth = 0): Promise<unknown[]> {
  try {
    return (await request({ method: 'eth_getLogs', params: [filter] }, options)) as unknown[];
  } catch (error) {
    const from = blockNumberOf(filter.fromBlock);
    const to = blockNumberOf(filter.toBlock);
    if (from === undefined || to === undefined || to <= from) throw error;
    if (depth >= MAX_SPLIT_DEPTH || !isLogRangeRefusal(error)) throw error;
    const middle = from + (to - from) / 2n;
    const first = await getLogsInParts(request, { ...filter, toBlock: toHex(middle) }, options, depth + 1);
    const second = await getLogsInParts(request, { ...filter, fromBlock: toHex(middle + 1n) }, options, depth + 1);
    return [...first, ...second];
  }
}

interface LogFilter {
  fromBlock?: unknown;
  toBlock?: unknown;
  [key: string]: unknown;
}

const blockNumberOf = (value: unknown): bigint | undefined =>
  typeof value === 'string' && /^0x[0-9a-f]+$/i.test(value) ? BigInt(value) : undefined;

/**
 * A transport whose `eth_getLogs` splits ranges the provider refuses (`getLogsInParts`), beneath every action
 * that reads logs (`getLogs`, `getContractEvents`, filters' first read): the consumers keep the ranges they
 * choose, and a provider with tighter limits still answers them whole.
 */
export function withLogRangeSplitting<transport extends Transport>(transport: transport): transport {
  return ((config: Parameters<transport>[0]) => {
    const inner = transport(config);
    const request = inner.request as unknown as Request;
    return {
      ...inner,
      request: ((args: { method: string; params?: unknown }, options?: unknown) => {
        const filter = (args.params as unknown[] | undefined)?.[0] as LogFilter | undefined;
        if (args.method !== 'eth_getLogs' || filter === undefined || typeof filter !== 'object')
          return request(args, options);
        return getLogsInParts(request, filter, options);
      }) as typeof inner.request,
    };
  }) as transport;
}
