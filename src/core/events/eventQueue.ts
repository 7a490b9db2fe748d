/**
 * A push-to-pull queue: producers `push` and `end`, one consumer iterates. Unbounded: a stream of one request
 * has a handful of statuses, and a slow `requestUpdates` consumer is bounded by the transport's own buffer.
 * `onClose` runs once, when the stream ends or the consumer stops (`return()`), to release the subscription.
 */
export interface EventQueue<T> extends AsyncIterableIterator<T> {
  push(value: T): void;
  /** No more values: the consumer sees the end after the queued ones. */
  end(): void;
  readonly ended: boolean;
}

export function createEventQueue<T>(onClose: () => void): EventQueue<T> {
  const values: T[] = [];
  const waiting: Array<(result: IteratorResult<T>) => void> = [];
  let ended = false;
  let closed = false;

  const close = (): void => {
    if (closed) return;
    closed = true;
    onClose();
  };
  const done = (): IteratorResult<T> => ({ value: undefined, done: true });

  const queue: EventQueue<T> = {
    get ended() {
      return ended;
    },
    push(value) {
      if (ended) return;
      const next = waiting.shift();
      if (next) next({ value, done: false });
      else values.push(value);
    },
    end() {
      if (ended) return;
      ended = true;
      close();
      for (const next of waiting.splice(0)) next(done());
    },
    next() {
      if (values.length > 0) return Promise.resolve({ value: values.shift() as T, done: false });
      if (ended) return Promise.resolve(done());
      return new Promise((resolve) => waiting.push(resolve));
    },
    return() {
      values.length = 0;
      queue.end();
      return Promise.resolve(done());
    },
    [Symbol.asyncIterator]() {
      return queue;
    },
  };
  return queue;
}
