import { createServer } from 'node:net';
import { DEFAULT_DEVNET_CHAIN_IDS } from '../chain/devnet.js';
import { ConfigError } from './config.js';

/** Whether something already listens on `host:port` (tried by listening on it and closing at once). */
function isPortBusy(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EADDRINUSE' || error.code === 'EACCES'),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

/**
 * Checks, before anything starts, that the gateway's `PORT` and the devnet's anvil ports (`DEVNET_BASE_PORT` and
 * the next ones, one per chain) are free, so a busy port is reported at once and by the variable that sets it,
 * not after the whole devnet deployed or as an anvil stack trace. Port 0 (pick a free one) is never busy.
 *
 * @throws ConfigError naming every busy port and the variable to change.
 */
export async function checkPortsFree(params: {
  host: string;
  port: number;
  devnetBasePort: number | null;
}): Promise<void> {
  const problems: string[] = [];
  if (params.port !== 0 && (await isPortBusy(params.host, params.port))) {
    problems.push(
      `PORT ${params.port} on ${params.host} is already in use: stop what listens there, or set PORT to a free port (PORT=0 picks one)`,
    );
  }
  if (params.devnetBasePort !== null && params.devnetBasePort !== 0) {
    for (const [index, chainId] of DEFAULT_DEVNET_CHAIN_IDS.entries()) {
      const port = params.devnetBasePort + index;
      if (await isPortBusy('127.0.0.1', port)) {
        problems.push(
          `port ${port} for devnet chain ${chainId} (DEVNET_BASE_PORT ${params.devnetBasePort} + ${index}) is already in use, perhaps by another devnet: stop it, or set DEVNET_BASE_PORT to another first port (DEVNET_BASE_PORT=0 picks free ports)`,
        );
      }
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
}
