import { startDevnet, type Devnet } from '../../src/chain/devnet.js';
import { configFromEnvironment, type GatewayConfig } from '../../src/server/config.js';
import { createServer, type CreateServerOptions, type GatewayServer } from '../../src/server/createServer.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';

export interface TestGateway {
  devnet: Devnet;
  server: GatewayServer;
  config: GatewayConfig;
  url: string;
  stop(): Promise<void>;
}

export interface StartTestGatewayOptions {
  /** Changes the configuration once the devnet is known (e.g. puts an RPC proxy in front of a chain). */
  configure?: (config: GatewayConfig, devnet: Devnet) => GatewayConfig | Promise<GatewayConfig>;
  /** Passed to `createServer` (e.g. a log destination the test reads). */
  server?: CreateServerOptions;
  /** More environment variables for the configuration, as `npm start` would read them (`GATEWAY_ADMIN_TOKEN`). */
  environment?: Record<string, string>;
}

/** A real devnet (automine, free ports) and a gateway on port 0 with in-memory PGlite unless overridden. */
export async function startTestGateway(
  overrides: Partial<GatewayConfig> = {},
  options: StartTestGatewayOptions = {},
): Promise<TestGateway> {
  const devnet = await startDevnet({ basePort: 0 });
  try {
    let config: GatewayConfig = {
      ...configFromEnvironment(
        { ...options.environment, PORT: '0', GATEWAY_LOG_LEVEL: 'silent' },
        devnetChainConfigs(devnet.descriptor),
        devnet.descriptor.solver.privateKey,
      ),
      ...overrides,
    };
    if (options.configure !== undefined) config = await options.configure(config, devnet);
    const server = await createServer(config, options.server);
    const url = await server.start();
    return {
      devnet,
      server,
      config,
      url,
      async stop() {
        await server.stop();
        await devnet.stop();
      },
    };
  } catch (error) {
    await devnet.stop();
    throw error;
  }
}
