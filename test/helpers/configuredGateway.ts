import { startDevnet, type DevnetDescriptor } from '../../src/chain/devnet.js';
import type { ChainConfig } from '../../src/core/chains/types.js';
import { configFromEnvironment, type GatewayConfig } from '../../src/server/config.js';
import { createServer } from '../../src/server/createServer.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import type { TestGateway } from './gateway.js';

/**
 * Like `startTestGateway`, for settings that depend on the devnet's addresses: `configure` gets the devnet's
 * descriptor and chain configuration and returns the overrides of the gateway's configuration.
 */
export async function startConfiguredGateway(
  configure: (descriptor: DevnetDescriptor, chains: ChainConfig[]) => Partial<GatewayConfig>,
): Promise<TestGateway> {
  const devnet = await startDevnet({ basePort: 0 });
  try {
    const base = configFromEnvironment({ PORT: '0', GATEWAY_LOG_LEVEL: 'silent' }, devnetChainConfigs(devnet.descriptor), devnet.descriptor.solver.privateKey);
    const config: GatewayConfig = { ...base, ...configure(devnet.descriptor, base.chains) };
    const server = await createServer(config);
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
