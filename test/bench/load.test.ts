import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../../bench/load.js';
import { threadCpuSeconds } from '../../bench/serverProcess.js';
import { windowCpu } from '../../bench/windowCpu.js';

describe('bench load: the measuring window', () => {
  let server: http.Server;
  let baseUrl: string;
  beforeAll(async () => {
    server = http.createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('calls onWindow at the window’s start and end (after the warm-up), before runLoad returns', async () => {
    const edges: Array<{ edge: string; at: number }> = [];
    const started = performance.now();
    const result = await runLoad({
      baseUrl,
      concurrency: 2,
      warmupSeconds: 0.3,
      durationSeconds: 0.4,
      nextRequest: () => ({ method: 'GET', path: '/' }),
      onWindow: (edge) => edges.push({ edge, at: performance.now() - started }),
    });
    expect(edges.map((e) => e.edge)).toEqual(['start', 'end']);
    // The edges come from the request loop's own clock and timers, which may fire a millisecond or two either way:
    // what matters is that the warm-up came first and the window spans the duration, not the exact millisecond.
    expect(edges[0]!.at).toBeGreaterThanOrEqual(250);
    expect(edges[1]!.at - edges[0]!.at).toBeGreaterThanOrEqual(350);
    expect(result.requests).toBeGreaterThan(0);
  });

  it('reads a process’s CPU by thread, and over a window only', () => {
    const threads = threadCpuSeconds(process.pid);
    if (threads === null) return; // not Linux
    expect(threads.main).toBeGreaterThan(0);
    const window = windowCpu(process.pid);
    expect(window.result()).toBeNull();
    window.onWindow('start');
    const until = performance.now() + 50;
    while (performance.now() < until); // busy: this thread’s CPU (less on a loaded machine, never none)
    window.onWindow('end');
    const measured = window.result();
    expect(measured?.threads?.main).toBeGreaterThan(0);
    expect(measured?.cores).toBeGreaterThanOrEqual(measured?.threads?.main ?? Number.NaN);
  });
});
