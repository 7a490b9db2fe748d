/**
 * The pages the gateway serves, in headless Chromium with no route to the internet (every non-loopback request
 * is aborted and recorded): GraphiQL, the API reference and the explorer. One devnet and gateway for the file.
 * Screenshots go to $GATEWAY_SCREENSHOTS when set (never into the repository).
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

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
