/**
 * The pages the gateway serves, in headless Chromium with no route to the internet (every non-loopback request
 * is aborted and recorded): GraphiQL, the API reference and the explorer. One devnet and gateway for the file.
 * Screenshots go to $GATEWAY_SCREENSHOTS when set (never into the repository).
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { parseEther, zeroAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, waitForStatus } from '../helpers/quote.js';
import { depositNative as sendNativeDeposit } from '../helpers/deposits.js';

let gateway: TestGateway;
let browser: TestBrowser;

beforeAll(async () => {
  [gateway, browser] = await Promise.all([startTestGateway(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
});

const desktop = { width: 1280, height: 900 };
const phone = { width: 390, height: 844 };

async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.GATEWAY_SCREENSHOTS;
  if (dir !== undefined) await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: false });
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
    expect(text).toContain(`${quote.details.currencyOut.amountFormatted} ETH`);
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
      await screenshot(page, `explorer-request-${index === 0 ? 'desktop' : 'phone'}`);
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
    await screenshot(page, 'explorer-refund-desktop');
    await page.close();
    expectCleanRun();
  });
});
