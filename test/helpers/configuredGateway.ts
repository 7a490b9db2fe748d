import type { DevnetDescriptor } from '../../src/chain/devnet.js';
import type { ChainConfig } from '../../src/core/chains/types.js';
import type { GatewayConfig } from '../../src/server/config.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/**
 * `startTestGateway` for settings that depend on the devnet's addresses: `configure` gets the devnet's
 * descriptor and chain configuration and returns the overrides of the gateway's configuration.
 */
export function startConfiguredGateway(
  configure: (descriptor: DevnetDescriptor, chains: ChainConfig[]) => Partial<GatewayConfig>,
): Promise<TestGateway> {
  return startTestGateway(
    {},
    { configure: (config, devnet) => ({ ...config, ...configure(devnet.descriptor, config.chains) }) },
  );
}
