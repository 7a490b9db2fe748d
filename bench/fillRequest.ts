/**
 * One measured request of `npm run bench:fill`, driven as a wallet and the SDK drive it: quote a native-ETH
 * bridge, sign and send the deposit, then watch from the client, every `pollMs`: first the deposit's receipt,
 * then `GET /intents/status/v3`, noting when each status is first seen and the server's `updatedAt` for it.
 *
 * Client times are `performance.now()` milliseconds (monotonic, sub-millisecond); `updatedAt` is the server's
 * Unix milliseconds. Both processes run on this machine, so one wall-clock stamp beside the receipt
 * (`minedWallAt`) lets the report compare it with `updatedAt` too.
 */
import {
  createPublicClient,
  createWalletClient,
  http,
  TransactionReceiptNotFoundError,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../src/chain/devnet.js';

/** The first sighting of one status on the status route. */
export interface StatusSighting {
  /** Client clock (ms) when the response showing it arrived. */
  seenAt: number;
  /** The server's `updatedAt` (Unix ms) in that response: when the status was recorded. */
  updatedAt: number;
}

/** Everything one request left behind; `failure` is null when it reached `success`. */
export interface FillTrace {
  index: number;
  account: Address;
  requestId: Hex | null;
  /** Client clock just before `eth_sendRawTransaction` of the deposit. */
  sentAt: number | null;
  /** Client clock when a receipt of the deposit was first returned. */
  minedAt: number | null;
  /** Unix ms at the same moment as `minedAt`, to compare with the server's `updatedAt`. */
  minedWallAt: number | null;
  /** The origin block that holds the deposit. */
  depositBlock: bigint | null;
  /** The fill's transaction on the destination chain, from the status at `success`. */
  fillTxHash: Hex | null;
  /**
   * Client clock when blocks arrived (`bench/blockClock.ts`), filled in after the run: the deposit's origin block,
   * the first destination block after it (`nextDestinationAt`), the first destination block at least
   * `REACTION_MS` after it (`firstDestinationAt`, the earliest a fill can land: the floor), and the fill's block;
   * `blocksLate` counts from the floor's block.
   */
  blocks?: {
    originAt: number;
    nextDestinationAt: number;
    firstDestinationAt: number;
    fillAt: number;
    blocksLate: number;
  };
  statuses: Map<string, StatusSighting>;
  failure: { kind: string; detail: string } | null;
}

/** An origin-chain wallet of one funded test account; its sends are serialized so nonces never collide. */
export interface DepositWallet {
  address: Address;
  wallet: WalletClient<Transport, Chain, Account>;
  client: PublicClient;
  /** Tail of this account's send queue. */
  queue: Promise<unknown>;
}

export interface FillRequestParameters {
  baseUrl: string;
  origin: DevnetChain;
  destinationChainId: number;
  wallet: DepositWallet;
  amount: bigint;
  pollMs: number;
  /** From the deposit's broadcast to `success`; beyond it the request counts as timed out. */
  timeoutMs: number;
}

/** Statuses after which nothing more happens for this benchmark (anything but `success` is a failure). */
const FAILED_STATUSES = new Set(['failure', 'refund', 'refunded']);

/** The origin-chain wallet of one funded test account. */
export function createDepositWallet(origin: DevnetChain, account: DevnetAccount): DepositWallet {
  const chain = devnetViemChain(origin);
  return {
    address: account.address,
    wallet: createWalletClient({
      account: privateKeyToAccount(account.privateKey),
      chain,
      transport: http(origin.rpcUrl),
    }),
    client: createPublicClient({ chain, transport: http(origin.rpcUrl) }),
    queue: Promise.resolve(),
  };
}

class RequestFailure extends Error {
  constructor(
    readonly kind: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** Runs one request to `success` (or a failure, or the timeout); never throws. */
export async function runFillRequest(index: number, params: FillRequestParameters): Promise<FillTrace> {
  const trace: FillTrace = {
    index,
    account: params.wallet.address,
    requestId: null,
    sentAt: null,
    minedAt: null,
    minedWallAt: null,
    depositBlock: null,
    fillTxHash: null,
    statuses: new Map(),
    failure: null,
  };
  try {
    await drive(trace, params);
  } catch (error) {
    trace.failure =
      error instanceof RequestFailure
        ? { kind: error.kind, detail: error.message }
        : { kind: 'error', detail: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  return trace;
}

async function drive(trace: FillTrace, params: FillRequestParameters): Promise<void> {
  const { baseUrl, origin, wallet, pollMs } = params;
  const deposit = await quoteDeposit(params);
  trace.requestId = deposit.requestId;

  const { hash, sentAt } = await sendDeposit(wallet, deposit);
  trace.sentAt = sentAt;
  const deadline = sentAt + params.timeoutMs;

  for (;;) {
    const polledAt = performance.now();
    try {
      const receipt = await wallet.client.getTransactionReceipt({ hash });
      trace.minedAt = performance.now();
      trace.minedWallAt = Date.now();
      trace.depositBlock = receipt.blockNumber;
      if (receipt.status !== 'success')
        throw new RequestFailure('deposit reverted', `deposit ${hash} reverted on ${origin.chainId}`);
      break;
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
    }
    if (performance.now() > deadline)
      throw new RequestFailure('timeout', `deposit ${hash} not mined within ${params.timeoutMs} ms`);
    await sleepUntil(polledAt + pollMs);
  }

  const statusUrl = `${baseUrl}/intents/status/v3?requestId=${deposit.requestId}`;
  for (;;) {
    const polledAt = performance.now();
    const response = await fetch(statusUrl);
    const body = (await response.json()) as { status?: string; updatedAt?: number; txHashes?: Hex[] };
    const seenAt = performance.now();
    if (response.status !== 200 || typeof body.status !== 'string' || typeof body.updatedAt !== 'number') {
      throw new RequestFailure(`status HTTP ${response.status}`, JSON.stringify(body).slice(0, 500));
    }
    if (!trace.statuses.has(body.status)) trace.statuses.set(body.status, { seenAt, updatedAt: body.updatedAt });
    if (body.status === 'success') {
      trace.fillTxHash = body.txHashes?.[0] ?? null;
      return;
    }
    if (FAILED_STATUSES.has(body.status))
      throw new RequestFailure(`status ${body.status}`, JSON.stringify(body).slice(0, 500));
    if (seenAt > deadline)
      throw new RequestFailure(
        'timeout',
        `no success within ${params.timeoutMs} ms of the deposit; last status ${body.status}`,
      );
    await sleepUntil(polledAt + pollMs);
  }
}

/** The one deposit transaction a native-ETH bridge quote asks for. */
export interface QuotedDeposit {
  requestId: Hex;
  to: Address;
  data: Hex;
  value: bigint;
}

export type QuoteDepositParameters = Pick<
  FillRequestParameters,
  'baseUrl' | 'origin' | 'destinationChainId' | 'wallet' | 'amount'
> & {
  /** Quote with this API key (`x-api-key`): the request is then the key's, and its webhook is called. */
  apiKey?: string;
};

/** POST /quote/v2 for a native-ETH bridge; the quote must be one deposit transaction on the origin chain. */
export async function quoteDeposit(params: QuoteDepositParameters): Promise<QuotedDeposit> {
  const body = {
    user: params.wallet.address,
    originChainId: params.origin.chainId,
    destinationChainId: params.destinationChainId,
    originCurrency: '0x0000000000000000000000000000000000000000',
    destinationCurrency: '0x0000000000000000000000000000000000000000',
    amount: params.amount.toString(),
    tradeType: 'EXACT_INPUT',
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(params.apiKey === undefined ? {} : { 'x-api-key': params.apiKey }),
  };
  const response = await fetch(`${params.baseUrl}/quote/v2`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 200) throw new RequestFailure(`quote HTTP ${response.status}`, text.slice(0, 500));
  const steps = (
    JSON.parse(text) as {
      steps: Array<{
        requestId: Hex;
        items: Array<{ data: { from: Address; to: Address; data: Hex; value: string; chainId: number } }>;
      }>;
    }
  ).steps;
  const items = steps.flatMap((step) => step.items.map((item) => ({ requestId: step.requestId, ...item.data })));
  const only = items[0];
  if (items.length !== 1 || only === undefined || only.chainId !== params.origin.chainId) {
    throw new RequestFailure(
      'unexpected quote',
      `expected one deposit on ${params.origin.chainId}, got ${JSON.stringify(items).slice(0, 500)}`,
    );
  }
  return { requestId: only.requestId, to: only.to, data: only.data, value: BigInt(only.value) };
}

/**
 * Prepares (nonce, gas, fees) and signs outside the timed span, so `sentAt` is the moment the signed deposit
 * leaves for the node. Sends of one account are queued: the next nonce is read after the previous send.
 */
export function sendDeposit(wallet: DepositWallet, deposit: QuotedDeposit): Promise<{ hash: Hex; sentAt: number }> {
  const send = async () => {
    const request = await wallet.wallet.prepareTransactionRequest({
      to: deposit.to,
      data: deposit.data,
      value: deposit.value,
    });
    const serializedTransaction = await wallet.wallet.signTransaction(request);
    const sentAt = performance.now();
    const hash = await wallet.wallet.sendRawTransaction({ serializedTransaction });
    return { hash, sentAt };
  };
  const result = wallet.queue.then(send, send);
  wallet.queue = result.catch(() => undefined);
  return result;
}

function sleepUntil(at: number): Promise<void> {
  const wait = at - performance.now();
  return wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : Promise.resolve();
}
