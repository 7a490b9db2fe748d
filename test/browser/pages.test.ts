/**
 * The pages the gateway serves, in headless Chromium with no route to the internet (every non-loopback request
 * is aborted and recorded): GraphiQL, the API reference and the explorer. One devnet and gateway for the file;
 * fills to chain 31339 have a small outflow limit over a long window, so a second fill there is held.
 * Every run keeps its screenshots in `test-results/screenshots/` (gitignored), or in $GATEWAY_SCREENSHOTS when set.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { parseEther, parseUnits, zeroAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';
import { depositNative as sendNativeDeposit } from '../helpers/deposits.js';
import { formatAmount } from '../../src/server/explorer/format.js';

const C = 31339;
/** USD the solver may deliver on chain C within the window: one 0.02 ETH bridge (about USD 60) and not two. */
const OUTFLOW_LIMIT_C_USD = '100';

let gateway: TestGateway;
let browser: TestBrowser;

beforeAll(async () => {
  [gateway, browser] = await Promise.all([
    startTestGateway(
      {},
      {
        configure: (config) => ({
          ...config,
          quote: {
            ...config.quote,
            exposure: {
              ...config.quote.exposure,
              outflowWindowSeconds: 3_600,
              chainOutflowUsdMicros: { [C]: parseUnits(OUTFLOW_LIMIT_C_USD, 6) },
            },
          },
        }),
      },
    ),
    launchBrowser(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
});

const desktop = { width: 1280, height: 900 };
const phone = { width: 390, height: 844 };

const screenshots =
  process.env.GATEWAY_SCREENSHOTS ?? path.resolve(import.meta.dirname, '../../test-results/screenshots');

async function screenshot(page: Page, name: string, fullPage = false): Promise<void> {
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage });
}

/** Elements reaching past the right edge of the viewport (tag, class, right edge), so a failure names them. */
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`),
  );
}

/** What every page must leave behind: nothing fetched from the internet, no console or page errors. */
function expectCleanRun(): void {
  expect(browser.blocked).toEqual([]);
  expect(browser.errors).toEqual([]);
}

describe('GraphiQL on /graphql', () => {
  it('renders from the npm package and runs a query', async () => {
    const page = await browser.newPage(desktop);
    const query = '{ chains { id name currency { symbol } } }';
    await page.goto(`${gateway.url}/graphql?query=${encodeURIComponent(query)}`);
    await page.locator('.graphiql-execute-button').click();
    const response = page.locator('.graphiql-response');
    await expect.poll(async () => response.innerText(), { timeout: 20_000 }).toMatch(/"symbol":\s*"ETH"/);
    expect(await response.innerText()).toContain(String(gateway.devnet.descriptor.chains[0]!.chainId));
    await screenshot(page, 'graphiql-desktop');
    await page.close();
    expectCleanRun();
  });

  it('runs a subscription over graphql-ws: the status turns from WAITING to SUCCESS as the deposit fills', async () => {
    const alice = gateway.devnet.descriptor.accounts[2]!;
    const quote = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
    });
    const requestId = quote.steps.at(-1)!.requestId;
    const page = await browser.newPage(desktop);
    const subscription = `subscription { requestStatus(requestId: "${requestId}") { requestId status txHashes } }`;
    await page.goto(`${gateway.url}/graphql?query=${encodeURIComponent(subscription)}`);
    await page.locator('.graphiql-execute-button').click();
    const response = page.locator('.graphiql-response');
    await expect.poll(async () => response.innerText(), { timeout: 20_000 }).toMatch(/"status":\s*"WAITING"/);

    // The page stays as it is; the deposit is sent from outside, and the subscription's results replace each other.
    await executeSteps(gateway, quote.steps, alice);
    await expect.poll(async () => response.innerText(), { timeout: 30_000 }).toMatch(/"status":\s*"SUCCESS"/);
    // The editor wraps long strings: compare without the whitespace it adds.
    const text = (await response.innerText()).replace(/\s+/g, '');
    expect(text).toContain(`"requestId":"${requestId}"`);
    expect(text).toMatch(/"txHashes":\["0x[0-9a-f]{64}"\]/);
    await screenshot(page, 'graphiql-subscription');
    await page.close();
    expectCleanRun();
  });
});

describe('API reference on /documentation', () => {
  it("renders the contract with Swagger UI, the descriptions' Markdown as HTML", async () => {
    const page = await browser.newPage(desktop);
    await page.goto(`${gateway.url}/documentation`);
    await page.locator('.information-container .title').waitFor({ timeout: 20_000 });
    expect(await page.locator('.information-container .title').innerText()).toContain('Intent Gateway API');
    // The info description's Markdown: a bulleted list and inline code, not raw dashes and backticks.
    const description = page.locator('.information-container .info__description');
    expect(await description.locator('li').count()).toBeGreaterThan(3);
    expect(await description.locator('code', { hasText: 'POST /quote/v2' }).count()).toBeGreaterThan(0);
    expect(await description.innerText()).not.toContain('`');
    // Every operation is listed, with its operationId.
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
    expect(await page.locator('#operations-quote-getQuote').count()).toBe(1);
    await screenshot(page, 'documentation-desktop');
    await page.close();
    expectCleanRun();
  });

  it('opens an operation from its old anchor and tries it out against this gateway', async () => {
    const page = await browser.newPage(desktop);
    // The anchors deprecation notices link to (`#getChains`) open the operation.
    await page.goto(`${gateway.url}/documentation#getChains`);
    await expect.poll(() => page.url()).toContain('#/chains/getChains');
    const operation = page.locator('#operations-chains-getChains');
    await operation.locator('.opblock-body').waitFor({ timeout: 20_000 });
    await operation.locator('button.execute').click();
    const body = operation.locator('.responses-wrapper .live-responses-table .response-col_description pre');
    await expect.poll(async () => body.first().innerText(), { timeout: 20_000 }).toContain('"chains"');
    expect(await operation.locator('.request-url pre').innerText()).toBe(`${gateway.url}/chains`);
    await page.close();
    expectCleanRun();
  });
});

/**
 * What a request page shows of amounts and fees: the output to significant digits with the exact value on hover
 * and on copy, every fee a positive cost with its dollars to the cent (the API's USD of a fee is negative).
 */
async function expectReadableAmounts(page: Page, out: { amount: string; amountFormatted: string; currency: any }) {
  const symbol = out.currency.symbol as string;
  const receives = page.locator('dl.facts dd data.amount').nth(1);
  expect(await receives.innerText()).toBe(`${formatAmount(out.amount, out.currency.decimals)} ${symbol}`);
  expect(await receives.getAttribute('title')).toBe(`${out.amountFormatted} ${symbol}`);
  // Copying the amount gives the exact value (a real copy event, with the selection on the rounded text). Polled:
  // a status event re-renders the page, and a node replaced meanwhile cannot hold the selection.
  const copy = () =>
    receives.evaluate((node) => {
      const range = document.createRange();
      range.selectNodeContents(node);
      document.getSelection()!.removeAllRanges();
      document.getSelection()!.addRange(range);
      const event = new ClipboardEvent('copy', { clipboardData: new DataTransfer(), bubbles: true, cancelable: true });
      node.dispatchEvent(event);
      document.getSelection()!.removeAllRanges();
      return event.clipboardData!.getData('text/plain');
    });
  await expect.poll(copy, { timeout: 10_000 }).toBe(`${out.amountFormatted} ${symbol}`);

  const fees = page.locator('table.fees tr[data-fee]');
  expect(await fees.count()).toBeGreaterThan(0);
  for (const cell of await page.locator('table.fees tr[data-fee] td[data-phase]').all()) {
    const text = await cell.innerText();
    if (text === 'after the fill' || text === '—') continue;
    expect(text).toMatch(/^\d[\d,]*(\.\d+)? [A-Z]+ \((\$\d[\d,]*\.\d\d|<\$0\.01)\)$/);
  }
  expect(await page.locator('main').innerText()).not.toContain('$-');
}

describe('explorer', () => {
  const alice = () => gateway.devnet.descriptor.accounts[0]!;
  const bob = () => gateway.devnet.descriptor.accounts[1]!;
  const ethQuote = (amount: bigint) => ({
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: amount.toString(),
  });

  it('the list shows a new request without a reload, with its route, amounts and status; search finds it', async () => {
    const page = await browser.newPage(desktop);
    await page.goto(`${gateway.url}/explorer`);
    await page.locator('h1', { hasText: 'Latest requests' }).waitFor();
    await page.evaluate(() => Object.assign(window, { notReloaded: true }));
    const quote = await requestQuote(gateway, alice(), ethQuote(parseEther('0.01')));
    const requestId = quote.steps.at(-1)!.requestId;
    const row = page.locator(`tr[data-request-id="${requestId}"]`);
    await row.waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    const text = await row.innerText();
    expect(text).toContain('Devnet A');
    expect(text).toContain('Devnet B');
    expect(text).toContain('0.01 ETH');
    // The output to six significant digits; the exact value on hover.
    const out = quote.details.currencyOut;
    const shown = row.locator('data.amount').nth(1);
    expect(await shown.innerText()).toBe(`${formatAmount(out.amount, 18)} ETH`);
    expect(formatAmount(out.amount, 18).replace(/^0\.0*/, '').length).toBeLessThanOrEqual(6);
    expect(await shown.getAttribute('title')).toBe(`${out.amountFormatted} ETH`);
    expect(await row.locator('[data-status]').getAttribute('data-status')).toBe('waiting');
    // Newest first.
    expect(await page.locator('tbody tr').first().getAttribute('data-request-id')).toBe(requestId);

    for (const term of [requestId, alice().address]) {
      await page.fill('#q', term);
      await page.click('.search button');
      await page.locator('h1', { hasText: 'matching' }).waitFor();
      await page.locator(`tr[data-request-id="${requestId}"]`).waitFor({ timeout: 20_000 });
    }
    await page.fill('#q', 'not a hash');
    await page.click('.search button');
    await page.locator('.error').waitFor();
    await page.close();
    expectCleanRun();
  });

  it('a request page opened before the deposit turns to success by itself, with its transactions', async () => {
    const quote = await requestQuote(gateway, alice(), ethQuote(parseEther('0.02')));
    const requestId = quote.steps.at(-1)!.requestId;
    const pages = await Promise.all([browser.newPage(desktop), browser.newPage(phone)]);
    for (const page of pages) {
      await page.goto(`${gateway.url}/explorer/requests/${requestId}`);
      await page.locator('#live.on').waitFor({ timeout: 20_000 });
      expect(await page.locator('.card [data-status]').getAttribute('data-status')).toBe('waiting');
      expect(await page.locator('[data-leg="origin"]').innerText()).toBe('Origin 0.02 ETH to deposit on Devnet A');
      await page.evaluate(() => Object.assign(window, { notReloaded: true }));
    }
    await executeSteps(gateway, quote.steps, alice());
    const status = await waitForStatus(gateway, requestId, ['success', 'refund', 'failure']);
    expect(status.status).toBe('success');
    for (const [index, page] of pages.entries()) {
      await page.locator('[data-final="success"]').waitFor({ timeout: 20_000 });
      expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
      expect(await page.locator('.card [data-status]').getAttribute('data-status')).toBe('success');
      expect(await page.locator('tr[data-kind="deposit"] [data-hash]').getAttribute('data-hash')).toBe(
        status.inTxHashes[0],
      );
      expect(await page.locator('tr[data-kind="fill"] [data-hash]').getAttribute('data-hash')).toBe(status.txHashes[0]);
      await expectReadableAmounts(page, quote.details.currencyOut);
      // A bridge: the deposit on A, the delivery on B from the solver's inventory.
      expect(await page.locator('[data-leg="origin"]').innerText()).toBe('Origin 0.02 ETH deposited on Devnet A');
      const destination = page.locator('[data-leg="destination"]');
      expect(await destination.getAttribute('data-sources')).toBe('solver-inventory');
      expect(await destination.innerText()).toContain("delivered on Devnet B from the solver's own inventory");
      await screenshot(page, `explorer-request-${index === 0 ? 'desktop' : 'phone'}`, true);
      // Nothing wider than the screen, also on a phone.
      expect(await overflowing(page)).toEqual([]);
      await page.close();
    }
    const list = await browser.newPage(phone);
    await list.goto(`${gateway.url}/explorer`);
    await list.locator(`tr[data-request-id="${requestId}"] [data-status="success"]`).waitFor({ timeout: 20_000 });
    expect(await overflowing(list)).toEqual([]);
    await screenshot(list, 'explorer-list-phone');
    await list.setViewportSize(desktop);
    await screenshot(list, 'explorer-list-desktop');
    // Search by the deposit's and the fill's transaction hash finds the request.
    for (const hash of [status.inTxHashes[0]!, status.txHashes[0]!]) {
      await list.fill('#q', hash);
      await list.click('.search button');
      await list.locator('h1', { hasText: 'matching' }).waitFor();
      await list.locator(`tr[data-request-id="${requestId}"]`).waitFor({ timeout: 20_000 });
    }
    await list.close();
    expectCleanRun();
  });

  it('a cross-chain swap shows its route: what went in, what came out and from which source', async () => {
    const chainB = gateway.devnet.descriptor.chains[1]!;
    const quote = await requestQuote(gateway, alice(), {
      originCurrency: zeroAddress,
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: parseEther('0.01').toString(),
    });
    const requestId = quote.steps.at(-1)!.requestId;
    await executeSteps(gateway, quote.steps, alice());
    expect((await waitForStatus(gateway, requestId, ['success', 'refund', 'failure'])).status).toBe('success');
    const page = await browser.newPage(desktop);
    await page.goto(`${gateway.url}/explorer/requests/${requestId}`);
    await page.locator('[data-final="success"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('[data-leg="origin"]').innerText()).toBe('Origin 0.01 ETH deposited on Devnet A');
    const destination = page.locator('[data-leg="destination"]');
    const out = quote.details.currencyOut;
    expect(await destination.getAttribute('data-sources')).toBe(quote.details.route.destination.router);
    expect(await destination.innerText()).toBe(
      `Destination ${formatAmount(out.amount, 6)} USDC delivered on Devnet B from the solver's own inventory`,
    );
    expect(await destination.locator('data.amount').getAttribute('title')).toBe(`${out.amountFormatted} USDC`);
    await expectReadableAmounts(page, out);
    await screenshot(page, 'explorer-swap-desktop', true);
    await page.close();
    expectCleanRun();
  });

  it('a request held by the outflow limit says so in plain words, while it is held', async () => {
    const carol = gateway.devnet.descriptor.accounts[3]!;
    const toC = { ...ethQuote(parseEther('0.02')), destinationChainId: C };
    // Both quoted before either fills: each fits the limit alone, the two together do not.
    const [first, second] = [await requestQuote(gateway, carol, toC), await requestQuote(gateway, carol, toC)];
    await executeSteps(gateway, first.steps, carol);
    await waitForStatus(gateway, first.steps.at(-1)!.requestId, ['success']);
    const requestId = second.steps.at(-1)!.requestId;
    const page = await browser.newPage(desktop);
    await page.goto(`${gateway.url}/explorer/requests/${requestId}`);
    await page.locator('#live.on').waitFor({ timeout: 20_000 });
    await executeSteps(gateway, second.steps, carol);

    // The page learns of the hold by itself: the deposit's status event, then `/ready`'s paused fills.
    const held = page.locator('[data-hold]');
    await held.waitFor({ timeout: 30_000 });
    expect(await held.getAttribute('data-hold')).toBe('outflow limit');
    const words = await held.innerText();
    expect(words).toContain('Deliveries to Devnet C have reached the most the gateway sends there in a short time');
    expect(words).toContain('The deposit is kept safe');
    expect(await page.locator('.card [data-status]').getAttribute('data-status')).toBe('pending');
    // The gateway's own message is one click away, not in the way.
    expect(await held.locator('details').getAttribute('open')).toBeNull();
    expect(await held.locator('details code').textContent()).toMatch(/outflow limit: fills on chain 31339/);
    await expectReadableAmounts(page, second.details.currencyOut);
    await screenshot(page, 'explorer-held-desktop', true);
    await page.close();
    expectCleanRun();
  });

  it('a refunded request says why in plain words and links the refund', async () => {
    const quote = await requestQuote(gateway, bob(), ethQuote(parseEther('0.02')));
    const requestId = quote.steps.at(-1)!.requestId;
    const chainA = gateway.devnet.descriptor.chains[0]!;
    await sendNativeDeposit(chainA, bob(), requestId, parseEther('0.019'));
    const status = await waitForStatus(gateway, requestId, ['refund', 'failure', 'success']);
    expect(status.status).toBe('refund');
    const page = await browser.newPage(desktop);
    await page.goto(`${gateway.url}/explorer/requests/${requestId}`);
    const final = page.locator('[data-final="refund"]');
    await final.waitFor({ timeout: 20_000 });
    expect(await final.innerText()).toContain('The deposit was smaller than the quoted amount');
    // No fill was made, so there are no actual fees to wait for.
    expect(await page.locator('table.fees').last().innerText()).not.toContain('after the fill');
    expect(await page.locator('tr[data-kind="refund"] [data-hash]').getAttribute('data-hash')).toBe(
      status.txHashes.at(-1),
    );
    expect(await page.locator('[data-leg="destination"]').innerText()).toBe(
      'Destination Nothing delivered on Devnet B',
    );
    await screenshot(page, 'explorer-refund-desktop', true);
    await page.close();
    expectCleanRun();
  });
});
