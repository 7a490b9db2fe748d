/** How a queued send's caller learns its outcome. */
export interface Settles<S> {
  settle: (outcome: Promise<S>) => void;
  fail: (error: unknown) => void;
}

/**
 * The per-sender queue: the work on the signer's nonces runs one piece at a time (`serialized`), and the sends that
 * wait for it together (the fills of one origin block) take one turn (`enqueue`, at most `batchSize` a turn).
 */
export interface SendQueue<W, S> {
  /** Runs `work` after everything queued so far. */
  serialized<T>(this: void, work: () => Promise<T>): Promise<T>;
  /** Queues a send; the next turn takes it with every other send waiting then. */
  enqueue(send: W): Promise<S>;
  /** Settles once everything queued so far has. */
  tail(): Promise<unknown>;
}

export function createSendQueue<W extends object, S>(params: {
  batchSize: number;
  /** One turn: the sends waiting when it started, each settled (or failed) through its `Settles`. */
  turn: (batch: Array<W & Settles<S>>) => Promise<void>;
}): SendQueue<W, S> {
  /** Tail of the queue (the per-sender mutex). */
  let queue: Promise<unknown> = Promise.resolve();
  /** Sends waiting for the queue; the next turn takes all of them (at most `batchSize`). */
  const waiting: Array<W & Settles<S>> = [];
  let turnQueued = false;

  function serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  }

  async function turn(): Promise<void> {
    turnQueued = false;
    const batch = waiting.splice(0, params.batchSize);
    if (waiting.length > 0) {
      turnQueued = true;
      void serialized(turn);
    }
    await params.turn(batch);
  }

  return {
    serialized,
    enqueue(send) {
      return new Promise<S>((resolve, reject) => {
        waiting.push({ ...send, settle: (outcome) => void outcome.then(resolve, reject), fail: reject });
        if (!turnQueued) {
          turnQueued = true;
          void serialized(turn);
        }
      });
    },
    tail: () => queue,
  };
}
