/**
 * Gateways on one shared devnet, each with a database of its own, started one after another with the same solver
 * key: the chain-truth tests (a database lost, restored from a backup, or kept by another gateway). Settlement runs
 * one pass at start and none after, so a deposit filled while a gateway runs stays unreleased unless the test
 * settles it.
 */
import type { Devnet } from '../../src/chain/devnet.js';
import { configFromEnvironment, type GatewayConfig } from '../../src/server/config.js';
import { createServer } from '../../src/server/createServer.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import type { TestGateway } from './gateway.js';

export interface SharedDevnetGatewayOptions {
  /** Receives the gateway's log lines, parsed (level `warn` and up). */
  logs?: any[];
  /** A PGlite data directory; absent: PGlite in memory. */
  dataDir?: string;
  /** More environment variables, as `npm start` would read them. */
  environment?: Record<string, string>;
}

export interface SharedDevnetGateways {
  start(options?: SharedDevnetGatewayOptions): Promise<TestGateway>;
  /** Stops every gateway started so far: one left running with the same key would act beside the next one. */
  stopAll(): Promise<void>;
}

/** The gateways of a test file on the devnet `devnetOf()` answers (started in its `beforeAll`). */
export function sharedDevnetGateways(devnetOf: () => Devnet): SharedDevnetGateways {
  const running: TestGateway[] = [];
  return {
    async start(options = {}) {
      const devnet = devnetOf();
      const logs = options.logs ?? [];
      const config: GatewayConfig = {
        ...configFromEnvironment(
          { ...options.environment, PORT: '0', GATEWAY_LOG_LEVEL: 'warn' },
          devnetChainConfigs(devnet.descriptor),
          devnet.descriptor.solver.privateKey,
        ),
        settlement: { intervalMs: 3_600_000, maxBatch: 50 },
        ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
      };
      const server = await createServer(config, {
        logDestination: { write: (line: string) => void logs.push(JSON.parse(line)) },
      });
      const url = await server.start();
      const gateway = { devnet, server, config, url, stop: () => server.stop() };
      running.push(gateway);
      return gateway;
    },
    async stopAll() {
      for (const gateway of running.splice(0)) await gateway.stop().catch(() => undefined);
    },
  };
}
