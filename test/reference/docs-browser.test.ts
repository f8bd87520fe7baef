// Swagger UI on /docs, loaded in a real headless Chromium (Debian's package; .ci/run installs it).
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from '../helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await makeApp({});
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(() => t.app.close());

describe('/docs in headless Chromium', () => {
  it('renders Swagger UI with the operations of both interfaces', async () => {
    expect(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: apt-get install -y chromium (as .ci/run does)`).toBe(true);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage();
      const failed: string[] = [];
      const cspViolations: string[] = [];
      page.on('requestfailed', (r) => failed.push(r.url()));
      page.on('console', (m) => {
        if (/content security policy/i.test(m.text())) cspViolations.push(m.text());
      });
      const doc = await page.goto(`${base}/docs`);
      // The UI's own CSP (with hashes of its inline code), not the strict one of API answers.
      expect(doc?.headers()['content-security-policy']).toMatch(/script-src 'self'/);
      expect(doc?.headers()['content-security-policy']).not.toMatch(/upgrade-insecure-requests/);
      await page.waitForSelector('.opblock-summary-path', { timeout: 15_000 });
      const paths = await page.$$eval('.opblock-summary-path', (els) => els.map((e) => e.getAttribute('data-path') ?? e.textContent?.trim()));
      const catalog = t.app.services.catalog.entries.map((e) => e.url);
      expect(paths.sort()).toEqual([...catalog].sort());
      expect(await page.textContent('.info .title')).toContain('marketgate');

      // "Try it out" on a free route works from the page under its CSP (Swagger UI names the block by operationId).
      const status = '#operations-Reference-getStatus';
      await page.click(`${status} .opblock-summary`);
      await page.click(`${status} .try-out__btn`);
      await page.click(`${status} .execute`);
      await page.waitForSelector(`${status} .live-responses-table tbody .response-col_status`, { timeout: 15_000 });
      expect((await page.textContent(`${status} .live-responses-table tbody .response-col_status`))?.trim()).toBe('200');

      expect(failed, failed.join(" ")).toEqual([]);
      expect(cspViolations).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
