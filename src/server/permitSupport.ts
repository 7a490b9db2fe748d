import type { ChainConfig } from '../core/chains/types.js';
import type { Logger } from '../core/logger.js';
import type { PermitChain } from '../core/ports/permits.js';

/**
 * At start: every currency configured with `supportsPermit` is probed on its chain; one whose token supports
 * neither EIP-3009 nor EIP-2612 is switched off (a warn log names it), so `/chains` and `usePermit` quotes only
 * offer permits that work. A chain that cannot be read keeps its setting (warned); quotes probe again.
 */
export async function verifyPermitSupport(chains: ChainConfig[], permits: PermitChain, log: Logger): Promise<void> {
  await Promise.all(
    chains.flatMap((chain) =>
      chain.currencies
        .filter((currency) => currency.supportsPermit)
        .map(async (currency) => {
          try {
            const token = await permits.token(chain.id, currency.address);
            if (token.standards.length > 0) return;
            currency.supportsPermit = false;
            log.warn(
              { chainId: chain.id, currency: currency.symbol, address: currency.address },
              'supportsPermit is configured but the token supports neither EIP-3009 nor EIP-2612: switched off',
            );
          } catch (error) {
            log.warn(
              { err: error, chainId: chain.id, currency: currency.symbol },
              'could not check the permit support of a currency; keeping its configured supportsPermit',
            );
          }
        }),
    ),
  );
}
