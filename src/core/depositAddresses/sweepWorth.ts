import { encodeFunctionData, zeroAddress, type Address, type Hex } from 'viem';
import { depositAddressFactoryAbi } from '../../../generated/contracts/index.js';
import type { DepositAddressRecord } from '../../records/depositAddress.js';
import { findCurrency, requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { convert, fromUsdMicros } from '../market.js';
import { defaultSweepSettings } from './settings.js';

/**
 * The least amount of `token` a sweep from `address` must move to be worth it: the sweep's gas (estimated for this
 * very sweep: the first one of an address also deploys it) at the current gas price, in `token` at oracle prices,
 * times (1 + margin), and at least the configured USD floor.
 */
export async function minimumWorthSweeping(
  ctx: CoreContext,
  address: DepositAddressRecord,
  sweep: { sweepId: Hex; token: string; amount: bigint; depositor: string },
): Promise<bigint> {
  const settings = ctx.config.depositAddressSweep ?? defaultSweepSettings;
  const chain = requireChain(ctx, address.chainId);
  const factory = chain.contracts.depositAddressFactory;
  if (factory === undefined) throw new Error(`no deposit-address factory on chain ${chain.id}`);
  const gas = await ctx.market.estimateGas(chain.id, {
    from: ctx.solver.address,
    to: factory,
    data: encodeFunctionData({
      abi: depositAddressFactoryAbi,
      functionName: 'sweep',
      args: [
        address.saltKey as Hex,
        (address.recoveryAddress ?? zeroAddress) as Address,
        sweep.sweepId,
        sweep.token as Address,
        [{ id: sweep.sweepId, depositor: sweep.depositor as Address, amount: sweep.amount }],
      ],
    }),
    value: 0n,
  });
  const costInNative = gas * (await ctx.market.gasPrice(chain.id));
  const currency = findCurrency(chain, sweep.token);
  if (currency === undefined) throw new Error(`token ${sweep.token} is not listed on chain ${chain.id}`);
  const price = await ctx.market.usdPrice(chain.id, currency);
  const native = sweep.token.toLowerCase() === zeroAddress;
  const cost = native
    ? costInNative
    : convert(
        costInNative,
        { decimals: chain.nativeCurrency.decimals, price: await ctx.market.usdPrice(chain.id, chain.nativeCurrency) },
        { decimals: currency.decimals, price },
        'up',
      );
  const withMargin = (cost * BigInt(10_000 + settings.marginBps) + 9_999n) / 10_000n;
  const floorUsd = settings.minimumUsdMicrosPerChain?.get(chain.id) ?? settings.minimumUsdMicros;
  const floor = floorUsd === 0n ? 0n : fromUsdMicros(floorUsd, currency.decimals, price, 'up');
  return withMargin > floor ? withMargin : floor;
}
