import { formatUnits, zeroAddress, type Address } from 'viem';
import { listFillOutflow } from '../../store/outflow.repository.js';
import type { RequestRecord } from '../../records/request.js';
import type { JsonObject } from '../../records/json.js';
import { storedAmount } from '../json.js';
import type { CoreContext } from '../context.js';
import { isGatewayError } from '../errors.js';
import { maxOutflowUsdMicros } from '../limits/exposure.js';
import { repriceAtFill } from './repriceAtFill.js';

/** What the solver does with a request that passed its checks: fill it, refund it, or hold it for later. */
export type FillGateDecision =
  | { kind: 'fill' }
  | { kind: 'refund'; failReason: 'SLIPPAGE' | 'TTL_EXPIRED'; details: JsonObject }
  /** Fills on the chain are paused: the request stays `pending` with its deposit and is tried again. */
  | { kind: 'hold'; reason: string };

/** Why fills on a destination chain are paused (the circuit breaker is open), for operators. */
export interface FillPause {
  chainId: number;
  reason: string;
  /** Unix ms of the first hold of this pause. */
  since: number;
  /** Requests held, paid and waiting. */
  held: number;
}

export interface FillGate {
  /** The last check before a fill: the fill-time price re-check, then the outflow limit of the destination. */
  check(request: RequestRecord): Promise<FillGateDecision>;
  /**
   * Whether the destination is one the solver serves (the start-up checks: its network, contracts and the token's
   * approval); a hold otherwise. Asked before the fill is validated: a fill simulated without the approval
   * reverts, and a revert is refunded, while the operator's fix would have let it be filled.
   */
  served(request: RequestRecord): FillGateDecision;
  /** The chains whose fills are paused now, and why. */
  pauses(): FillPause[];
  /** Why the request is held now (its chain's pause), or null when the gate does not hold it. */
  heldReason(requestId: string): string | null;
  /** Lets go of a held request that ends otherwise (refunded at its depositor's request). */
  forget(requestId: string): void;
  stop(): void;
}

export interface CreateFillGateParameters {
  ctx: CoreContext;
  /** Decides a held request again (it is still `pending`): called every few seconds while it is held. */
  retry: (requestId: string) => void;
}

/**
 * The solver's circuit breaker. Before each fill:
 *
 * 1. `repriceAtFill`: an order no longer worth filling at today's prices is refunded with `SLIPPAGE`.
 * 2. A price that cannot be trusted (stale, off its peg) or read (RPC down) holds the fill: the deposit is
 *    neither spent nor refunded on a price nobody can check.
 * 3. The outflow limit: the USD value of the fills recorded on the destination chain within the window (loaded
 *    from the database once, then kept here; the solver runs in one instance at a time) plus this fill must stay
 *    within the limit, or the fill is held until older fills leave the window.
 *
 * A hold pauses fills on that chain: logged at warn once per reason, listed by `pauses()` (shown on `/ready`),
 * and every held request is decided again every few seconds; when it passes, the pause ends (logged at info).
 * Held requests stay `pending` with their deposit, so a restart re-decides them too (`recover`): nothing paid is
 * lost, it is filled or refunded (`SLIPPAGE`, `ORDER_EXPIRED`, ...) once the pause ends. A hold is not forever: a
 * request that would be held `maxHoldSeconds` after it was paid (its move to `pending`, `updatedAt`: nothing else
 * touches that while it is pending, so the count survives a restart) is refunded instead, `TTL_EXPIRED`.
 */
export function createFillGate({ ctx, retry }: CreateFillGateParameters): FillGate {
  const limits = ctx.config.quote.exposure;
  const windowMs = limits.outflowWindowSeconds * 1_000;
  /** Admitted fills (from the database at the first check, then as admitted), oldest first. */
  let ledger: Promise<Array<{ requestId: string; chainId: number; at: number; usdMicros: bigint }>> | null = null;
  const held = new Map<string, number>();
  const maxHoldMs = limits.maxHoldSeconds * 1_000;
  const paused = new Map<number, { reason: string; since: number }>();
  const retryMs = Math.max(250, Math.min(5_000, windowMs / 4));
  const timer = setInterval(() => {
    for (const requestId of [...held.keys()]) retry(requestId);
  }, retryMs);
  timer.unref();

  function hold(request: RequestRecord, chainId: number, reason: string): FillGateDecision {
    if (request.status === 'pending' && ctx.now() - request.updatedAt >= maxHoldMs) {
      release(request);
      const message = `Held longer than the maximum hold of ${limits.maxHoldSeconds} s, then refunded: ${reason}`;
      return { kind: 'refund', failReason: 'TTL_EXPIRED', details: { message } };
    }
    held.set(request.id, chainId);
    const current = paused.get(chainId);
    paused.set(chainId, { reason, since: current?.since ?? ctx.now() });
    // Once per pause and kind of reason (`prices`, `outflow limit`), not once per held request.
    if (current === undefined || kindOf(current.reason) !== kindOf(reason)) {
      ctx.log.warn(
        { chainId, requestId: request.id, reason },
        'fills paused on this chain: paid requests are held and retried',
      );
    }
    return { kind: 'hold', reason };
  }

  function release(request: Pick<RequestRecord, 'id' | 'destinationChainId'>): void {
    const chainId = held.get(request.id) ?? request.destinationChainId;
    held.delete(request.id);
    if (paused.has(chainId) && ![...held.values()].includes(chainId)) {
      paused.delete(chainId);
      ctx.log.info({ chainId }, 'fills resumed on this chain');
    }
  }

  async function admitOutflow(request: RequestRecord): Promise<string | null> {
    ledger ??= listFillOutflow(ctx.db, ctx.now() - windowMs).then((fills) =>
      fills.map((fill) => ({
        requestId: fill.requestId,
        chainId: fill.chainId,
        at: fill.createdAt,
        usdMicros: fill.usdMicros,
      })),
    );
    let entries: Awaited<typeof ledger>;
    try {
      entries = await ledger;
    } catch (error) {
      ledger = null;
      throw error;
    }
    // Synchronous from here: two requests checked at once cannot both take the last room in the window.
    const since = ctx.now() - windowMs;
    while (entries.length > 0 && entries[0]!.at < since) entries.shift();
    const chainId = request.destinationChainId;
    if (entries.some((entry) => entry.requestId === request.id)) return null;
    const used = entries.reduce((sum, entry) => (entry.chainId === chainId ? sum + entry.usdMicros : sum), 0n);
    const value = storedAmount((request.feesQuoted.usdMicros as JsonObject | undefined)?.out);
    const max = maxOutflowUsdMicros(limits, chainId);
    if (used + value > max) {
      return `outflow limit: fills on chain ${chainId} delivered USD ${usd(used)} in the last ${limits.outflowWindowSeconds} s; this one (USD ${usd(value)}) would pass the limit of USD ${usd(max)}`;
    }
    entries.push({ requestId: request.id, chainId, at: ctx.now(), usdMicros: value });
    return null;
  }

  function served(request: RequestRecord): FillGateDecision {
    // A destination the start-up checks found unservable (wrong network, contracts not the solver's, the token
    // not approved): a fill would revert or land elsewhere, so the paid request waits for the operator's fix.
    const unserved = unservedDestination(ctx, request);
    if (unserved !== null) return hold(request, request.destinationChainId, unserved);
    if (held.get(request.id) !== undefined && paused.get(request.destinationChainId)?.reason.startsWith('start-up'))
      release(request);
    return { kind: 'fill' };
  }

  return {
    served,
    async check(request) {
      const destination = served(request);
      if (destination.kind !== 'fill') return destination;
      let priced;
      try {
        priced = await repriceAtFill(ctx, request);
      } catch (error) {
        if (!isGatewayError(error) || !error.retriable) throw error;
        return hold(request, request.destinationChainId, `prices: ${error.message}`);
      }
      if (!priced.ok) {
        release(request);
        return { kind: 'refund', failReason: priced.failReason, details: priced.details };
      }
      const overLimit = await admitOutflow(request);
      if (overLimit !== null) return hold(request, request.destinationChainId, overLimit);
      release(request);
      return { kind: 'fill' };
    },
    pauses() {
      return [...paused].map(([chainId, pause]) => ({
        chainId,
        ...pause,
        held: [...held.values()].filter((id) => id === chainId).length,
      }));
    },
    heldReason(requestId) {
      const chainId = held.get(requestId);
      return chainId === undefined ? null : (paused.get(chainId)?.reason ?? null);
    },
    forget(requestId) {
      const chainId = held.get(requestId);
      if (chainId !== undefined) release({ id: requestId, destinationChainId: chainId });
    },
    stop() {
      clearInterval(timer);
    },
  };
}

function unservedDestination(ctx: CoreContext, request: RequestRecord): string | null {
  const status = ctx.chainStatus;
  if (status === undefined) return null;
  const chain = status.chainBlocked(request.destinationChainId);
  if (chain !== null) return `start-up check: ${chain}`;
  if (request.destinationCurrency === zeroAddress) return null;
  const token = status.tokenBlocked(request.destinationChainId, request.destinationCurrency as Address);
  return token === null ? null : `start-up check: ${token}`;
}

const kindOf = (reason: string): string => reason.slice(0, reason.indexOf(':'));
const usd = (micros: bigint): string => formatUnits(micros, 6);
