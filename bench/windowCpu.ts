/**
 * The gateway's CPU over a load run's measuring window only (`runLoad`'s `onWindow`), by kind of thread: the
 * warm-up before it holds the first JIT compiles of a fresh server, which are not what a request costs.
 */
import { processCpuSeconds, threadCpuSeconds, type ThreadCpu } from './serverProcess.js';

export interface WindowCpu {
  /** Pass as `runLoad`'s `onWindow`. */
  onWindow: (edge: 'start' | 'end') => void;
  /**
   * After the run: the process's CPU over the window in cores (the threads' sum, from their nanosecond
   * `schedstat`, where /proc/<pid>/stat counts 10 ms ticks), and each kind of thread's; null off Linux or when
   * the window never closed.
   */
  result(): { cores: number; threads: ThreadCpu | null } | null;
}

export function windowCpu(pid: number): WindowCpu {
  let start: { at: bigint; process: number | null; threads: ThreadCpu | null } | undefined;
  let measured: { cores: number; threads: ThreadCpu | null } | null = null;
  return {
    onWindow(edge) {
      const at = process.hrtime.bigint();
      const processCpu = processCpuSeconds(pid);
      const threads = threadCpuSeconds(pid);
      if (edge === 'start') {
        start = { at, process: processCpu, threads };
        return;
      }
      if (start === undefined) return;
      const seconds = Number(at - start.at) / 1e9;
      if (threads !== null && start.threads !== null) {
        const cores: ThreadCpu = {
          main: (threads.main - start.threads.main) / seconds,
          worker: (threads.worker - start.threads.worker) / seconds,
          v8: (threads.v8 - start.threads.v8) / seconds,
          other: (threads.other - start.threads.other) / seconds,
        };
        measured = { cores: cores.main + cores.worker + cores.v8 + cores.other, threads: cores };
      } else if (processCpu !== null && start.process !== null) {
        measured = { cores: (processCpu - start.process) / seconds, threads: null };
      }
    },
    result: () => measured,
  };
}
