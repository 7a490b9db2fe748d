import pg from 'pg';
import type { Address } from 'viem';
import type { Logger } from '../core/logger.js';

export interface SolverLeadershipOptions {
  /** The PostgreSQL the gateways share. */
  databaseUrl: string;
  /** Their schema (`GATEWAY_DATABASE_SCHEMA`); gateways in other schemas are other deployments. */
  schema: string | undefined;
  /** The solver's address: one active solver per key and deployment. */
  solverAddress: Address;
  log: Logger;
  /** How often a standby tries to take the lock, ms. Default 1 000. */
  retryMs?: number;
  /** Start solving (this instance holds the lock). */
  onLead: () => Promise<void>;
  /** Stop solving: the lock is gone or being released. Must not return before nothing more is sent. */
  onStepDown: () => Promise<void>;
}

export interface SolverLeadership {
  /** Tries once to take the lock (leading before it returns when free), then keeps trying in the background. */
  start(): Promise<void>;
  /** Steps down if leading, releases the lock and stops trying. Idempotent. */
  stop(): Promise<void>;
  /** Whether this instance runs the solver now. */
  readonly leading: boolean;
}

/**
 * Which of several gateways on one PostgreSQL runs the solver: the one holding a session advisory lock on a
 * connection of its own, keyed by schema and solver address. The solver is one unit across chains (a deposit
 * watched on one chain is filled by the sender of another and refunded by the first), so one instance runs all
 * of it, and so exactly one instance sends the solver's transactions on each chain. The others stand by: they
 * serve quotes, status, streams and webhooks, and try the lock every `retryMs`. The lock belongs to the
 * connection, so when the holder dies (or its connection does), PostgreSQL releases it and a standby takes
 * over within `retryMs`; a holder that sees its lock connection fail steps down at once. Should two instances
 * still overlap for a moment (a holder that has not noticed yet), the database keeps them from doing the same
 * work twice: a deposit is claimed with its request's status change, a request has at most one live fill or
 * refund, and a signer's nonce is unique among the recorded transactions.
 */
export function createSolverLeadership(options: SolverLeadershipOptions): SolverLeadership {
  const { log } = options;
  const retryMs = options.retryMs ?? 1_000;
  const key = `gateway-solver:${options.schema ?? 'public'}:${options.solverAddress.toLowerCase()}`;
  let holder: pg.Client | null = null;
  let leading = false;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  /** Lead and step-down run one at a time, in order. */
  let transition: Promise<void> = Promise.resolve();

  const sequence = (step: () => Promise<void>): Promise<void> => {
    transition = transition
      .then(step)
      .catch((error: unknown) => log.error({ err: error }, 'solver leadership: a transition failed'));
    return transition;
  };

  function schedule(): void {
    if (stopped || timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      void attempt();
    }, retryMs);
    timer.unref();
  }

  async function attempt(): Promise<void> {
    if (stopped || holder !== null) return;
    const client = new pg.Client({ connectionString: options.databaseUrl, connectionTimeoutMillis: 10_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [
        key,
      ]);
      if (rows[0]?.locked !== true || stopped) {
        await client.end().catch(() => undefined);
        schedule();
        return;
      }
    } catch (error) {
      log.warn({ err: error }, 'solver leadership: could not reach the database to take the lock; retrying');
      await client.end().catch(() => undefined);
      schedule();
      return;
    }
    holder = client;
    const lost = () => {
      if (holder !== client) return;
      holder = null;
      log.error({ key }, 'solver leadership: the lock connection failed; stepping down');
      void sequence(stepDown).then(schedule);
    };
    client.on('error', lost);
    client.on('end', lost);
    await sequence(async () => {
      if (holder !== client) return;
      leading = true;
      log.info({ key }, 'solver leadership: this instance runs the solver');
      await options.onLead();
    });
  }

  async function stepDown(): Promise<void> {
    if (!leading) return;
    leading = false;
    await options.onStepDown();
  }

  let stopping: Promise<void> | null = null;
  return {
    get leading() {
      return leading;
    },
    async start() {
      await attempt();
      if (!leading && !stopped) log.info({ key }, 'solver leadership: another instance runs the solver; standing by');
    },
    stop() {
      stopping ??= (async () => {
        stopped = true;
        if (timer !== null) clearTimeout(timer);
        await sequence(stepDown);
        const client = holder;
        holder = null;
        if (client !== null) {
          await client.query('select pg_advisory_unlock(hashtext($1))', [key]).catch(() => undefined);
          await client.end().catch(() => undefined);
        }
      })();
      return stopping;
    },
  };
}
