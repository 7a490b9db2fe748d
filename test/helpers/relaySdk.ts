import { convertViemChainToRelayChain, createClient } from '@relayprotocol/relay-sdk';
import { devnetViemChain } from '../../src/chain/devnet.js';
import type { TestGateway } from './gateway.js';

/**
 * Points the unmodified reference SDK at a test gateway (only the base URL changes) with the devnet's chains, and
 * fast polling: 20 s of counted attempts (`pending` replies are not counted by the SDK).
 */
export function configureRelaySdk(gateway: TestGateway): void {
  createClient({
    baseApiUrl: gateway.url,
    source: 'gateway-tests',
    chains: gateway.devnet.descriptor.chains.map((chain) => convertViemChainToRelayChain(devnetViemChain(chain))),
    pollingInterval: 200,
    maxPollingAttemptsBeforeTimeout: 100,
  });
  // The constructor ignores `confirmationPollingInterval`; only the second call (configure) sets it.
  createClient({ confirmationPollingInterval: 100 });
}
