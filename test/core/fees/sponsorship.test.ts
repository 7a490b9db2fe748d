import { describe, expect, it } from 'vitest';
import {
  normalizeFeeComponent,
  splitSponsorship,
  type FeeComponent,
  type SplitSponsorshipParameters,
} from '../../../src/core/fees/index.js';

const components = { execution: 100n, swap: 200n, platform: 30n, app: 50n, rent: 1_000n };
const base = { components, sponsorshipEnabled: true } as const;

type Expected = {
  selected: FeeComponent[];
  sponsored: Record<FeeComponent, bigint>;
  sponsoredTotal: bigint;
  capHit: boolean;
};

const none = { execution: 0n, swap: 0n, platform: 0n, app: 0n, rent: 0n };

describe('splitSponsorship', () => {
  it.each<[string, SplitSponsorshipParameters, Expected]>([
    [
      "default selection: the gateway's fees (never app fees, rent only when listed)",
      { ...base, subsidizeFees: true },
      {
        selected: ['execution', 'swap', 'platform'],
        sponsored: { execution: 100n, swap: 200n, platform: 30n, app: 0n, rent: 0n },
        sponsoredTotal: 330n,
        capHit: false,
      },
    ],
    [
      'every sponsorable component, rent listed',
      { ...base, subsidizeFees: true, sponsoredComponents: ['rent', 'platform', 'swap', 'execution'] },
      {
        selected: ['execution', 'swap', 'platform', 'rent'],
        sponsored: { ...components, app: 0n },
        sponsoredTotal: 1_330n,
        capHit: false,
      },
    ],
    [
      'execution and platform only',
      { ...base, subsidizeFees: true, sponsoredComponents: ['execution', 'platform'] },
      {
        selected: ['execution', 'platform'],
        sponsored: { ...none, execution: 100n, platform: 30n },
        sponsoredTotal: 130n,
        capHit: false,
      },
    ],
    [
      'relay alias selects platform',
      { ...base, subsidizeFees: true, sponsoredComponents: ['relay'] },
      { selected: ['platform'], sponsored: { ...none, platform: 30n }, sponsoredTotal: 30n, capHit: false },
    ],
    [
      'service alias selects platform',
      { ...base, subsidizeFees: true, sponsoredComponents: ['service', 'platform'] },
      { selected: ['platform'], sponsored: { ...none, platform: 30n }, sponsoredTotal: 30n, capHit: false },
    ],
    [
      'no sponsorship requested',
      { ...base, subsidizeFees: false },
      { selected: [], sponsored: none, sponsoredTotal: 0n, capHit: false },
    ],
    [
      'no sponsorship requested and not enabled',
      { ...base, subsidizeFees: false, sponsorshipEnabled: false },
      { selected: [], sponsored: none, sponsoredTotal: 0n, capHit: false },
    ],
    [
      'empty component list sponsors nothing',
      { ...base, subsidizeFees: true, sponsoredComponents: [] },
      { selected: [], sponsored: none, sponsoredTotal: 0n, capHit: false },
    ],
    [
      'cap hit: paid in component order, partial swap',
      { ...base, subsidizeFees: true, maxSubsidization: 150n },
      {
        selected: ['execution', 'swap', 'platform'],
        sponsored: { ...none, execution: 100n, swap: 50n },
        sponsoredTotal: 150n,
        capHit: true,
      },
    ],
    [
      'cap hit with a subset: execution then platform',
      { ...base, subsidizeFees: true, sponsoredComponents: ['platform', 'execution'], maxSubsidization: 110n },
      {
        selected: ['execution', 'platform'],
        sponsored: { ...none, execution: 100n, platform: 10n },
        sponsoredTotal: 110n,
        capHit: true,
      },
    ],
    [
      'cap of zero sponsors nothing and is hit',
      { ...base, subsidizeFees: true, sponsoredComponents: ['execution'], maxSubsidization: 0n },
      { selected: ['execution'], sponsored: none, sponsoredTotal: 0n, capHit: true },
    ],
    [
      'cap exactly equal to the selected total is not hit',
      { ...base, subsidizeFees: true, maxSubsidization: 330n },
      {
        selected: ['execution', 'swap', 'platform'],
        sponsored: { ...none, execution: 100n, swap: 200n, platform: 30n },
        sponsoredTotal: 330n,
        capHit: false,
      },
    ],
    [
      'a negative component (reward) is never sponsored',
      {
        components: { execution: 100n, swap: -40n, platform: 30n, app: 0n },
        sponsorshipEnabled: true,
        subsidizeFees: true,
      },
      {
        selected: ['execution', 'swap', 'platform'],
        sponsored: { ...none, execution: 100n, platform: 30n },
        sponsoredTotal: 130n,
        capHit: false,
      },
    ],
  ])('%s', (_name, params, expected) => {
    const result = splitSponsorship(params);
    expect(result.selected).toEqual(expected.selected);
    expect(result.sponsoredTotal).toBe(expected.sponsoredTotal);
    expect(result.capHit).toBe(expected.capHit);
    let userPaysTotal = 0n;
    for (const [name, split] of Object.entries(result.perComponent)) {
      const component = name as FeeComponent;
      const total = params.components[component] ?? 0n;
      expect(split).toEqual({
        selected: expected.selected.includes(component),
        total,
        sponsored: expected.sponsored[component],
        userPays: total - expected.sponsored[component],
      });
      userPaysTotal += split.userPays;
    }
    expect(Object.keys(result.perComponent).sort()).toEqual(['app', 'execution', 'platform', 'rent', 'swap']);
    expect(result.userPaysTotal).toBe(userPaysTotal);
  });

  it.each<[string, SplitSponsorshipParameters, string]>([
    [
      'subsidizeFees without sponsorship enabled',
      { components, subsidizeFees: true, sponsorshipEnabled: false },
      'FORBIDDEN',
    ],
    [
      'sponsoredComponents without subsidizeFees',
      { ...base, subsidizeFees: false, sponsoredComponents: ['execution'] },
      'INVALID_INPUT',
    ],
    [
      'an unknown component',
      { ...base, subsidizeFees: true, sponsoredComponents: ['gas' as FeeComponent] },
      'INVALID_INPUT',
    ],
    ['a negative cap', { ...base, subsidizeFees: true, maxSubsidization: -1n }, 'INVALID_INPUT'],
  ])('rejects %s', (_name, params, code) => {
    expect(() => splitSponsorship(params)).toThrow(expect.objectContaining({ code }));
  });

  it('never sponsors app fees: a list naming app is refused, naming the field', () => {
    for (const sponsoredComponents of [['app'], ['execution', 'app']] as FeeComponent[][]) {
      expect(() => splitSponsorship({ ...base, subsidizeFees: true, sponsoredComponents })).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT', data: 'sponsoredFeeComponents' }),
      );
    }
  });
});

describe('normalizeFeeComponent', () => {
  it.each<[string, FeeComponent]>([
    ['relay', 'platform'],
    ['service', 'platform'],
    ['platform', 'platform'],
    ['execution', 'execution'],
    ['swap', 'swap'],
    ['app', 'app'],
    ['rent', 'rent'],
    ['Relay', 'platform'],
  ])('%s -> %s', (name, expected) => {
    expect(normalizeFeeComponent(name)).toBe(expected);
  });

  it('rejects an unknown name with INVALID_INPUT', () => {
    expect(() => normalizeFeeComponent('relayer')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});
