import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface StartAnvilParameters {
  chainId: number;
  /** 0 (the default) lets the OS pick a free port; anvil reports it on stdout. */
  port?: number;
  /** Seconds between blocks; omitted = automine (a block per transaction). */
  blockTime?: number;
  /** Interface to bind; defaults to 127.0.0.1. */
  host?: string;
  /** Drop anvil's own logging instead of forwarding it to this process's stdout. Defaults to true. */
  silent?: boolean;
  /** How long to wait for the node to answer `eth_chainId`. Defaults to 20 s. */
  startTimeoutMs?: number;
}

export interface AnvilInstance {
  chainId: number;
  rpcUrl: string;
  wsUrl: string;
  port: number;
  pid: number;
  /** SIGTERM, then SIGKILL after 3 s; resolves once the process has exited. Safe to call twice. */
  stop: () => Promise<void>;
}

/** Keeps this much of anvil's recent output for error messages. */
const OUTPUT_TAIL_CHARS = 4_000;
const KILL_GRACE_MS = 3_000;

/** Absolute path of the anvil binary shipped by `@foundry-rs/anvil-linux-amd64`. */
function anvilBinaryPath(): string {
  const require = createRequire(import.meta.url);
  let packageJson: string;
  try {
    packageJson = require.resolve('@foundry-rs/anvil-linux-amd64/package.json');
  } catch (cause) {
    throw new Error(
      'anvil is not installed: the optional dependency @foundry-rs/anvil-linux-amd64 is missing ' +
        '(it exists for linux x64 only; run `npm ci` there)',
      { cause },
    );
  }
  const binary = join(dirname(packageJson), 'bin', 'anvil');
  if (!existsSync(binary)) throw new Error(`anvil binary not found at ${binary}`);
  return binary;
}

/**
 * Starts a local anvil chain and resolves once it answers JSON-RPC. The binary is spawned directly
 * (not through a wrapper script) so the returned pid is anvil's own and `stop()` really stops it.
 *
 * @throws Error with anvil's output when the binary is missing, exits early or does not come up in time.
 */
export async function startAnvil(parameters: StartAnvilParameters): Promise<AnvilInstance> {
  const { chainId, port = 0, blockTime, host = '127.0.0.1', silent = true, startTimeoutMs = 20_000 } = parameters;
  const args = ['--chain-id', String(chainId), '--port', String(port), '--host', host];
  if (blockTime !== undefined) args.push('--block-time', String(blockTime));

  const child = spawn(anvilBinaryPath(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const remember = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    if (!silent) process.stdout.write(chunk);
  };
  // Keep draining both pipes for the whole life of the process: a full pipe would block anvil.
  child.stdout.on('data', remember);
  child.stderr.on('data', remember);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => {
      if (child.pid === undefined) resolve(); // never spawned, so there will be no 'exit'
    });
  });
  // Last resort if this process exits without calling stop() (e.g. process.exit in a test runner).
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const describe = (): string => `anvil (chain ${chainId}, args: ${args.join(' ')})`;
  const stop = createStop(child, exited);
  try {
    const listeningPort = await waitForListening(child, () => output, describe, startTimeoutMs);
    const rpcUrl = `http://${urlHost(host)}:${listeningPort}`;
    const wsUrl = `ws://${urlHost(host)}:${listeningPort}`;
    await waitForChainId(rpcUrl, chainId, child, () => output, describe, startTimeoutMs);
    // The tail is only for start-up errors. Anvil logs a line per RPC request, so keeping it after start-up cost
    // the gateway a string copy of the tail per request on the devnet; the pipes are still drained (flowing, no
    // listener: chunks are dropped), and still forwarded when not silent.
    child.stdout.off('data', remember);
    child.stderr.off('data', remember);
    output = '';
    if (!silent) {
      child.stdout.on('data', (chunk: Buffer) => process.stdout.write(chunk));
      child.stderr.on('data', (chunk: Buffer) => process.stdout.write(chunk));
    }
    return { chainId, rpcUrl, wsUrl, port: listeningPort, pid: child.pid!, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function createStop(child: ChildProcess, exited: Promise<void>): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };
}

/** Resolves with the port from anvil's "Listening on host:port" line. */
function waitForListening(
  child: ChildProcess,
  output: () => string,
  describe: () => string,
  timeoutMs: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('close', onExit);
      child.off('error', onError);
    };
    const onData = (): void => {
      const match = /Listening on .*:(\d+)/.exec(output());
      if (match) {
        cleanup();
        resolve(Number(match[1]));
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      cleanup();
      reject(new Error(`${describe()} exited before listening (code ${code}, signal ${signal}):\n${output()}`));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(new Error(`${describe()} could not be started: ${error.message}`, { cause: error }));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${describe()} did not start listening within ${timeoutMs} ms:\n${output()}`));
    }, timeoutMs);
    child.stdout?.on('data', onData);
    child.once('close', onExit);
    child.once('error', onError);
  });
}

/** Polls `eth_chainId` until the node answers with the expected id. */
async function waitForChainId(
  rpcUrl: string,
  chainId: number,
  child: ChildProcess,
  output: () => string,
  describe: () => string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${describe()} exited during startup (code ${child.exitCode}):\n${output()}`);
    }
    try {
      const response = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        signal: AbortSignal.timeout(2_000),
      });
      const body = (await response.json()) as { result?: string };
      if (body.result !== undefined && Number(body.result) === chainId) return;
      lastError = new Error(`unexpected eth_chainId answer ${JSON.stringify(body)}`);
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${describe()} did not answer eth_chainId at ${rpcUrl} within ${timeoutMs} ms:\n${output()}`, {
    cause: lastError,
  });
}

/** `0.0.0.0` is not a connectable address; IPv6 literals need brackets in URLs. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
