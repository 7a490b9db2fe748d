/**
 * Calls that each would run a statement, grouped: the first runs at once (with `gatherTurn`, with the others made in
 * the same turn of the event loop), and the calls made while a group is under way go together in the next group,
 * one statement for all of them. On PGlite every statement waits its turn behind
 * every other (one connection), so a block's worth of reads, claims or marks made one by one waited that many turns.
 * Every call is answered from a group that started after the call was made.
 *
 * `run` answers a group in the order of its items. `fits` says whether an item may join the group being formed (the
 * first always does); one that does not waits for a later group, in its turn.
 */
export function groupedCalls<T, R>(
  run: (items: readonly T[]) => Promise<readonly R[]>,
  fits: (group: readonly T[], item: T) => boolean = () => true,
  options: GroupedCallsOptions = {},
): (item: T) => Promise<R> {
  let waiting: Array<{ item: T; resolve: (answer: R) => void; reject: (error: unknown) => void }> = [];
  let running = false;

  async function drain(): Promise<void> {
    while (waiting.length > 0) {
      const group: typeof waiting = [];
      const later: typeof waiting = [];
      const items: T[] = [];
      for (const call of waiting) {
        if (group.length === 0 || fits(items, call.item)) {
          group.push(call);
          items.push(call.item);
        } else later.push(call);
      }
      waiting = later;
      try {
        const answers = await run(items);
        for (const [index, call] of group.entries()) call.resolve(answers[index]!);
      } catch (error) {
        for (const call of group) call.reject(error);
      }
    }
    running = false;
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (running) return;
      running = true;
      if (options.gatherTurn === true) setImmediate(() => void drain());
      else void drain();
    });
}

export interface GroupedCallsOptions {
  /**
   * The first group, when no group is under way, waits for the end of the event loop's turn (`setImmediate`), so
   * that the calls made in the same turn (a block's deposits, handed on together) go together in it rather than
   * the first alone and the rest after it. Default: the first call goes at once.
   */
  gatherTurn?: boolean;
}
