import { GatewayError } from '../errors.js';

/** Fee components a sponsor can cover, in the order a capped sponsorship pays them. */
export const FEE_COMPONENTS = ['execution', 'swap', 'platform', 'app', 'rent'] as const;
export type FeeComponent = (typeof FEE_COMPONENTS)[number];

/**
 * Components sponsored when `subsidizeFees` is set without a list (rent only when listed). The reference's default
 * also has `app`; here app fees are never sponsored (`NEVER_SPONSORED`).
 */
export const DEFAULT_SPONSORED_COMPONENTS: ReadonlyArray<FeeComponent> = ['execution', 'swap', 'platform'];

/**
 * App fees are the user's to pay, whatever `sponsoredFeeComponents` says. A sponsor's allowance is the operator's
 * money, and an app fee goes to a wallet the quoting integrator names: the gateway cannot tell whether that wallet is
 * the integrator's own, so a sponsored app fee would turn the allowance into the integrator's cash, claimable at once
 * (docs/security.md, "Fee sponsorship"). An app that wants its users not to pay its fee charges none.
 */
export const NEVER_SPONSORED: ReadonlyArray<FeeComponent> = ['app'];

/**
 * Maps a component name to the core's spelling. The reference calls the platform fee `relay` (in
 * `feeSponsorship`) and `service` (in `expandedPriceImpact`); both become `platform`.
 * Throws `INVALID_INPUT` on an unknown name.
 */
export function normalizeFeeComponent(name: string): FeeComponent {
  const lower = name.toLowerCase();
  if (lower === 'relay' || lower === 'service') return 'platform';
  if ((FEE_COMPONENTS as ReadonlyArray<string>).includes(lower)) return lower as FeeComponent;
  throw new GatewayError(
    'INVALID_INPUT',
    `Unknown fee component "${name}"; expected one of ${FEE_COMPONENTS.join(', ')}, relay`,
  );
}

export interface SplitSponsorshipParameters {
  /** Fee components in one currency, smallest units. */
  components: { execution: bigint; swap: bigint; platform: bigint; app: bigint; rent?: bigint };
  subsidizeFees: boolean;
  /** Components to sponsor; reference spellings (`relay`, `service`) are accepted. */
  sponsoredComponents?: ReadonlyArray<FeeComponent | 'relay' | 'service'>;
  /** Whether the caller's API key may sponsor fees. */
  sponsorshipEnabled: boolean;
  /** Most the sponsor pays, in the same currency and units as `components` (the caller converts from USD). */
  maxSubsidization?: bigint;
}

export interface ComponentSplit {
  selected: boolean;
  total: bigint;
  sponsored: bigint;
  userPays: bigint;
}

export interface SplitSponsorshipReturnType {
  /** Selected components in payment order. */
  selected: FeeComponent[];
  perComponent: Record<FeeComponent, ComponentSplit>;
  sponsoredTotal: bigint;
  userPaysTotal: bigint;
  /** True when the cap stopped the sponsor from covering every selected component in full. */
  capHit: boolean;
}

/**
 * Splits fees between the sponsor and the user (quote `feeSponsorship`, api-facts §1.6).
 *
 * The sponsor covers the selected components in `FEE_COMPONENTS` order until `maxSubsidization` runs out; the
 * user pays the rest. A negative component (a reward) is never sponsored: the user keeps it. Without
 * `subsidizeFees` nothing is selected; app fees never are (`NEVER_SPONSORED`).
 *
 * Throws `FORBIDDEN` when `subsidizeFees` is set but sponsorship is not enabled for the caller, and
 * `INVALID_INPUT` when `sponsoredComponents` is given without `subsidizeFees`, names an unknown component or one
 * that is never sponsored, or the cap is negative.
 */
export function splitSponsorship(params: SplitSponsorshipParameters): SplitSponsorshipReturnType {
  const { subsidizeFees, sponsoredComponents, sponsorshipEnabled, maxSubsidization } = params;
  if (subsidizeFees && !sponsorshipEnabled) {
    throw new GatewayError('FORBIDDEN', 'Fee sponsorship (subsidizeFees) is not enabled for this API key');
  }
  if (sponsoredComponents !== undefined && !subsidizeFees) {
    throw new GatewayError('INVALID_INPUT', 'sponsoredComponents requires subsidizeFees to be true');
  }
  if (maxSubsidization !== undefined && maxSubsidization < 0n) {
    throw new GatewayError('INVALID_INPUT', `maxSubsidization must not be negative, got ${maxSubsidization}`);
  }

  const wanted = new Set<FeeComponent>(
    !subsidizeFees ? [] : (sponsoredComponents?.map(normalizeFeeComponent) ?? DEFAULT_SPONSORED_COMPONENTS),
  );
  for (const component of NEVER_SPONSORED) {
    if (wanted.has(component))
      throw new GatewayError(
        'INVALID_INPUT',
        `The ${component} fee cannot be sponsored: the user pays app fees (leave ${component} out of sponsoredFeeComponents, or charge no app fee)`,
        { data: 'sponsoredFeeComponents' },
      );
  }
  const selected = FEE_COMPONENTS.filter((component) => wanted.has(component));

  const totals: Record<FeeComponent, bigint> = { ...params.components, rent: params.components.rent ?? 0n };
  let remaining = maxSubsidization;
  let capHit = false;
  const perComponent = {} as Record<FeeComponent, ComponentSplit>;
  for (const component of FEE_COMPONENTS) {
    const total = totals[component];
    const isSelected = wanted.has(component);
    let sponsored = 0n;
    if (isSelected && total > 0n) {
      sponsored = remaining === undefined || remaining >= total ? total : remaining;
      if (sponsored < total) capHit = true;
      if (remaining !== undefined) remaining -= sponsored;
    }
    perComponent[component] = { selected: isSelected, total, sponsored, userPays: total - sponsored };
  }

  let sponsoredTotal = 0n;
  let userPaysTotal = 0n;
  for (const { sponsored, userPays } of Object.values(perComponent)) {
    sponsoredTotal += sponsored;
    userPaysTotal += userPays;
  }
  return { selected, perComponent, sponsoredTotal, userPaysTotal, capHit };
}
