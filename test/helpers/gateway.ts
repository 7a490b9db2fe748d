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

/** A real devnet (automine, free ports) and a gateway on port 0 with in-memory PGlite unless overridden. */
export async function startTestGateway(overrides: Partial<GatewayConfig> = {}, options: CreateServerOptions = {}): Promise<TestGateway> {
  const devnet = await startDevnet({ basePort: 0 });
  try {
    const config: GatewayConfig = {
      ...configFromEnvironment({ PORT: '0', GATEWAY_LOG_LEVEL: 'silent' }, devnetChainConfigs(devnet.descriptor), devnet.descriptor.solver.privateKey),
      ...overrides,
    };
    const server = await createServer(config, options);
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
