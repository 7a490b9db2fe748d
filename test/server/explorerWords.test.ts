/**
 * What the explorer says about a refunded, failed or held request (`src/server/explorer/words.js`, the module the
 * page imports): reason codes in plain words, and a pause read from `/ready` exactly as the gateway writes it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { withFillPauses } from '../../src/server/readiness.js';
import { holdWords, pauseFromCheck, REASONS, reasonWords } from '../../src/server/explorer/words.js';

describe('reasonWords', () => {
  it('gives a known code in plain words, an unknown one as it is, and no code as the fallback', () => {
    expect(reasonWords('DEPOSITED_AMOUNT_TOO_LOW_TO_FILL', 'x')).toBe(REASONS.DEPOSITED_AMOUNT_TOO_LOW_TO_FILL);
    expect(reasonWords('SOME_NEW_REASON', 'x')).toBe('Reason: SOME_NEW_REASON');
    expect(reasonWords('SOME_NEW_REASON', 'x', 'Refund: ')).toBe('Refund: SOME_NEW_REASON');
    for (const none of [null, undefined, '', 'N/A'])
      expect(reasonWords(none, 'The fill failed.')).toBe('The fill failed.');
  });

  it('has words for every reason the gateway records', async () => {
    // The codes the core writes (`failReason: 'X'`, `refundFailReason: 'X'`), anywhere in src/core.
    const recorded = new Set<string>();
    const core = new URL('../../src/core/', import.meta.url);
    for (const file of await readdir(core, { recursive: true })) {
      if (!file.endsWith('.ts')) continue;
      const text = await readFile(new URL(file, core), 'utf8');
      for (const [, code] of text.matchAll(/[fF]ailReason: '([A-Z_]+)'/g)) recorded.add(code!);
    }
    expect(recorded.size).toBeGreaterThan(0);
    for (const code of recorded) expect(REASONS, code).toHaveProperty(code);
  });
});

describe('pauseFromCheck', () => {
  const since = Date.UTC(2026, 10, 29, 12, 0, 0);
  /** The `fills:<chainId>` check `/ready` shows for a pause with this reason, as the gateway writes it. */
  const checkFor = (reason: string) =>
    withFillPauses({ ready: true, degraded: false, checks: {} }, [{ chainId: 31339, reason, since, held: 2 }]).checks[
      'fills:31339'
    ];

  it.each([
    ['prices: ETH/USD feed answer is stale: updated 120 s before the latest block', 'prices'],
    ['outflow limit: fills on chain 31339 delivered USD 60 in the last 3600 s; this one would pass', 'outflow limit'],
    ['start-up check: token USDC is not approved', 'start-up check'],
  ])('reads the kind of %s', (reason, kind) => {
    const pause = pauseFromCheck(checkFor(reason));
    expect(pause).toEqual({ kind, since: new Date(since).toISOString(), message: checkFor(reason)!.message });
    expect(holdWords(pause!.kind, 'Devnet C')).toMatch(/^(Deliveries to|The gateway cannot deliver on) Devnet C /);
    expect(holdWords(pause!.kind, 'Devnet C')).toContain('The deposit is kept safe');
  });

  it('a check of another form is a pause of kind unknown; no check is no pause', () => {
    expect(pauseFromCheck({ ok: true, message: 'paused for maintenance' })).toEqual({
      kind: 'unknown',
      since: null,
      message: 'paused for maintenance',
    });
    expect(holdWords('unknown', 'Devnet B')).toBe(
      'Deliveries to Devnet B are paused by the gateway. The deposit is kept safe; the request is filled or refunded once they resume.',
    );
    expect(pauseFromCheck(undefined)).toBeNull();
    expect(pauseFromCheck({ ok: true })).toBeNull();
  });

  it('has words for every kind of pause the fill gate writes', async () => {
    const gate = await readFile(new URL('../../src/core/solver/fillGate.ts', import.meta.url), 'utf8');
    const kinds = new Set([...gate.matchAll(/`([a-z][a-z -]+): /g)].map(([, kind]) => kind!));
    expect([...kinds].sort()).toEqual(['outflow limit', 'prices', 'start-up check']);
    for (const kind of kinds) expect(holdWords(kind, 'X')).not.toContain('paused by the gateway.');
  });
});
