import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's `chromium` package (`.ci/run` installs it); playwright-core never downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium';

export interface TestBrowser {
  context: BrowserContext;
  /** Every request the page tried outside the loopback interface (they were aborted). */
  blocked: string[];
  /** Console errors and uncaught page errors, from every page opened. */
  errors: string[];
  /** A new page whose console errors and page errors are collected. */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

const loopback = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Headless Chromium with a new, empty profile and no route to the internet: every request to a host other than
 * the loopback interface is aborted and recorded in `blocked`, so a page that needs a CDN fails the test.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'gateway-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const blocked: string[] = [];
  const errors: string[] = [];
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || loopback.has(url.hostname)) return route.continue();
    blocked.push(url.href);
    return route.abort('internetdisconnected');
  });
  const watch = (page: Page): Page => {
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
    return page;
  };
  return {
    context,
    blocked,
    errors,
    async newPage(viewport) {
      const page = watch(await context.newPage());
      if (viewport !== undefined) await page.setViewportSize(viewport);
      return page;
    },
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
