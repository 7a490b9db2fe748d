import type { Address } from 'viem';
import type { JsonObject, JsonValue } from '../../records/json.js';
import type { FeeSponsorshipPhase, SponsorshipComponentName } from '../quote/types.js';
import type { Amount } from '../vocabulary/amount.js';
import type { BareAmount, SponsorshipComponentV3, SponsorshipPhase } from './types.js';

/*
 * The fee sponsorship of a request, read back from the stored quote (`quote.feeSponsorship.quoted`, the wire
 * JSON the client received) into core form, and its requests-v3 form.
 */

/** A JSON value as an object, or undefined. */
export const asObject = (value: JsonValue | undefined): JsonObject | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;

const sponsorshipComponents: readonly SponsorshipComponentName[] = ['execution', 'swap', 'service', 'app', 'rent'];

/** The quote's `feeSponsorship.quoted` as stored (wire JSON), back in core form; null when absent or malformed. */
export function parseSponsorshipPhase(value: JsonObject | undefined): FeeSponsorshipPhase | null {
  if (value === undefined) return null;
  const components = asObject(value.components);
  const selected = value.selectedComponents;
  const sponsoredTotal = parseAmount(value.sponsoredTotal);
  const userPaysTotal = parseAmount(value.userPaysTotal);
  if (components === undefined || !Array.isArray(selected) || sponsoredTotal === null || userPaysTotal === null)
    return null;
  const parsed: Partial<FeeSponsorshipPhase['components']> = {};
  for (const name of sponsorshipComponents) {
    const component = asObject(components[name]);
    const total = parseAmount(component?.total);
    const sponsored = parseAmount(component?.sponsored);
    const userPays = parseAmount(component?.userPays);
    if (component === undefined || total === null || sponsored === null || userPays === null) return null;
    parsed[name] = { selected: component.selected === true, total, sponsored, userPays };
  }
  const cap = value.maxSubsidizationAmount;
  return {
    // `relay` (the reference's name, stored beside `service`) is the same component: counted once.
    selectedComponents: selected.filter((name): name is SponsorshipComponentName =>
      sponsorshipComponents.includes(name as SponsorshipComponentName),
    ),
    ...(typeof cap === 'string' && /^[0-9]+$/.test(cap) ? { maxSubsidizationAmount: cap } : {}),
    capHit: value.capHit === true,
    components: parsed as FeeSponsorshipPhase['components'],
    sponsoredTotal,
    userPaysTotal,
  };
}

function parseAmount(value: JsonValue | undefined): Amount | null {
  const amount = asObject(value);
  const currency = asObject(amount?.currency);
  const metadata = asObject(currency?.metadata);
  if (amount === undefined || currency === undefined || metadata === undefined) return null;
  const { amount: raw, minimumAmount, amountFormatted, amountUsd } = amount;
  const { address, symbol, name } = currency;
  const logoURI = metadata.logoURI ?? '';
  if (
    typeof address !== 'string' ||
    typeof symbol !== 'string' ||
    typeof name !== 'string' ||
    typeof logoURI !== 'string' ||
    typeof raw !== 'string' ||
    typeof minimumAmount !== 'string' ||
    typeof amountFormatted !== 'string' ||
    typeof amountUsd !== 'string'
  )
    return null;
  if (!/^-?[0-9]+$/.test(raw) || !/^-?[0-9]+$/.test(minimumAmount)) return null;
  return {
    currency: {
      chainId: Number(currency.chainId),
      address: address as Address,
      symbol,
      name,
      decimals: Number(currency.decimals),
      metadata: {
        logoURI,
        verified: metadata.verified === true,
        isNative: metadata.isNative === true,
      },
    },
    amount: BigInt(raw),
    amountFormatted,
    amountUsd,
    minimumAmount: BigInt(minimumAmount),
  };
}

const bare = (amount: Amount): BareAmount => ({
  amount: amount.amount,
  amountFormatted: amount.amountFormatted,
  amountUsd: amount.amountUsd,
  minimumAmount: amount.minimumAmount,
});

const v3Component = (name: SponsorshipComponentName): SponsorshipComponentV3 =>
  name === 'service' ? 'platform' : name;

/** The requests v3 form of a sponsorship phase: `service` renamed `platform`, the currency hoisted out. */
export function toPhaseV3(phase: FeeSponsorshipPhase): SponsorshipPhase {
  const components = Object.fromEntries(
    sponsorshipComponents.map((name) => {
      const { selected, total, sponsored, userPays } = phase.components[name];
      return [
        v3Component(name),
        { selected, total: bare(total), sponsored: bare(sponsored), userPays: bare(userPays) },
      ];
    }),
  ) as SponsorshipPhase['components'];
  return {
    selectedComponents: phase.selectedComponents.filter((name) => name !== 'relay').map(v3Component),
    ...(phase.maxSubsidizationAmount === undefined
      ? {}
      : { maxSubsidizationAmount: BigInt(phase.maxSubsidizationAmount) }),
    capHit: phase.capHit,
    components,
    sponsoredTotal: bare(phase.sponsoredTotal),
    userPaysTotal: bare(phase.userPaysTotal),
  };
}
