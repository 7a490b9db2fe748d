import { describe, expect, it } from 'vitest';
import { formatInventory, type InventoryLine } from '../../../src/core/inventory/inventory.js';

const line = (chainId: number, symbol: string, decimals: number, onChain: bigint): InventoryLine => ({
  chainId,
  currency: `0x${String(chainId).padStart(40, '0')}`,
  group: symbol.toLowerCase(),
  symbol,
  decimals,
  onChain,
  committed: onChain / 3n,
  available: onChain - onChain / 3n,
  pendingSettlement: 7n,
  ledger: onChain,
});

describe('formatInventory', () => {
  it('keeps every column aligned, 18-decimal amounts included, amounts flush right', () => {
    const out = formatInventory({
      lines: [line(31337, 'ETH', 18, 123_456_789_012_345_678_901_234n), line(31338, 'USDC', 6, 5_000_000n)],
      short: [],
      plan: [],
      reconciliation: [],
    });
    const [header, eth, usdc] = out as [string, string, string];
    expect(eth).toContain('123456.789012345678901234');
    // The column of each amount ends where its title ends or further, in every row alike.
    const ends = (row: string) => [...row.matchAll(/\S+/g)].map((match) => match.index + match[0].length);
    expect(ends(eth).slice(2)).toEqual(ends(usdc).slice(2));
    expect(ends(eth).at(-1)).toBe(header.length);
    for (const title of ['on chain', 'committed', 'available', 'pending settle'])
      expect(ends(eth)).toContain(header.indexOf(title) + title.length);
  });
});
