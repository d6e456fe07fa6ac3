import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import { A, seedFixture } from '../api/fixture.ts';
import { get } from '../api/helpers.ts';
import { freshDatabase, type TestDatabase } from '../helpers/db.ts';

/**
 * The web page and the docs page in a real headless Chromium (issue 13), against the published
 * fixture generation (test/api/fixture.ts): the page shows exactly what the API serves, the
 * category filter and the generation pin work, and no request leaves the origin.
 * Chromium: `apt-get install -y chromium` (Debian); CHROMIUM_PATH points elsewhere.
 */
const executablePath = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
].find((p): p is string => !!p && existsSync(p));
if (!executablePath)
  console.warn(
    'web tests skipped: no Chromium found; install one with `apt-get install -y chromium` (or set CHROMIUM_PATH)',
  );

/** micro-USDC as the page shows USDC, computed here with bigints: 9007199254740993 -> 9,007,199,254.740993. */
function usdcText(micro: bigint | number | string): string {
  const m = BigInt(micro);
  const whole = (m / 1_000_000n).toLocaleString('en-US');
  const frac = (m % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${frac}`;
}

/** An API body with every `*_micro` integer kept exact, as a string. */
const exact = (text: string) => JSON.parse(text.replace(/("[a-z0-9_]*_micro":)(\d+)/g, '$1"$2"'));

describe.skipIf(!executablePath)('the web page in Chromium', () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  const foreign: string[] = [];

  beforeAll(async () => {
    db = await freshDatabase('pglite');
    await seedFixture(db.db);
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    browser = await puppeteer.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await db?.close();
  });

  /** A page that refuses (and records) any request to another origin. */
  async function open(url: string): Promise<Page> {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 900 });
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      if (new URL(request.url()).origin !== base && !request.url().startsWith('data:')) {
        foreign.push(request.url());
        void request.abort();
      } else void request.continue();
    });
    await page.goto(`${base}${url}`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('body[data-ready]', { timeout: 20_000 });
    return page;
  }
  const rowsOf = (page: Page, table: string) =>
    page.$$eval(`table#${table} tbody tr`, (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())),
    );

  it('default: the rankings show exactly the numbers the API serves', async () => {
    const page = await open('/');
    const api = exact((await get(app, '/api/v1/rankings')).text);
    const rows = await rowsOf(page, 'rankings');
    expect(rows).toHaveLength(api.rankings.length);
    for (const [i, r] of api.rankings.entries()) {
      expect(rows[i]!.slice(0, 6)).toEqual([
        String(r.rank),
        `${r.display_name} ${r.seller_address.slice(0, 8)}…${r.seller_address.slice(-4)}`,
        usdcText(r.verified_revenue_30d_micro),
        usdcText(r.median_payment_30d_micro),
        String(r.payments_30d),
        String(r.payers_30d),
      ]);
    }
    expect(rows[0]![2]).toBe('9,007,199,254.740993'); // 2^53 + 1 micro-USDC, exact
    expect(await page.$eval('#freshness', (el) => el.textContent)).toContain('Generation 1');
    // sorting by payments, ascending then descending
    await page.click('table#rankings th:nth-child(5) button');
    const desc = (await rowsOf(page, 'rankings')).map((r) => Number(r[4]));
    expect(desc).toEqual([...desc].sort((a, b) => b - a));
    await page.close();
  });

  it('behavior: the category filter keeps the sellers of that category; the pin is kept in links', async () => {
    const page = await open('/?category=data-access&generation=1');
    expect((await rowsOf(page, 'rankings')).map((r) => r[0])).toEqual(['1']); // only seller A has a data-access listing
    expect(await page.$eval('#freshness', (el) => el.textContent)).toContain('Generation 1 (pinned)');
    const hrefs = await page.$$eval('table#rankings a', (as) => as.map((a) => a.getAttribute('href')));
    expect(hrefs.every((h) => h!.includes('generation=1'))).toBe(true);
    await page.close();
    const missing = await open('/?generation=3'); // built, never published
    expect(await missing.$eval('[role=alert]', (el) => el.textContent)).toContain(
      'generation 3 is not a retained published generation',
    );
    await missing.close();
  });

  it('behavior: a seller page shows its metrics, its payments with explorer links, and how to audit it', async () => {
    const page = await open(`/?seller=${A}`);
    const metric = (name: string) => page.$eval(`[data-metric=${name}]`, (el) => el.textContent);
    expect(await metric('revenue')).toBe('9,007,199,254.740993 USDC');
    expect(await metric('median')).toBe('3.00 USDC');
    expect(await metric('payments')).toBe('5');
    expect(await metric('payers')).toBe('3');
    const payments = (await get(app, `/api/v1/sellers/${A}/payments?limit=20`)).json.payments as { tx_hash: string }[];
    const links = await page.$$eval('table#payments a', (as) => as.map((a) => a.getAttribute('href')));
    expect(links).toEqual(payments.map((p) => `https://basescan.org/tx/${p.tx_hash}`));
    expect(await page.$eval('main pre', (el) => el.textContent)).toBe(
      `npx x402-tally audit --generation 1 --seller ${A}`,
    );
    if (process.env.WRITE_SCREENSHOT) {
      mkdirSync(path.join(projectRoot, 'docs/img'), { recursive: true });
      const ranking = await open('/');
      await ranking.screenshot({ path: path.join(projectRoot, 'docs/img/web.png'), fullPage: true });
      await ranking.close();
    }
    await page.close();
  });

  it('behavior: the market view totals the days the API serves, and draws the chart', async () => {
    const page = await open('/?view=market');
    const days = exact((await get(app, '/api/v1/market/daily')).text).days as {
      volume_micro: string;
      payments: number;
    }[];
    const micro = days.reduce((s, d) => s + BigInt(d.volume_micro), 0n);
    const payments = days.reduce((s, d) => s + d.payments, 0);
    expect(await page.$eval('#market-totals', (el) => el.textContent)).toBe(
      `${days.length} days: ${usdcText(micro)} USDC in ${payments.toLocaleString('en-US')} payments.`,
    );
    expect(await page.$('#market-chart canvas')).not.toBeNull();
    await page.close();
  });

  it('behavior: the API docs page renders the operations of the OpenAPI document, offline', async () => {
    const page = await browser.newPage();
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      if (new URL(request.url()).origin !== base && !request.url().startsWith('data:')) {
        foreign.push(request.url());
        void request.abort();
      } else void request.continue();
    });
    await page.goto(`${base}/api/v1/docs`, { waitUntil: 'networkidle0' });
    const doc = (await get(app, '/api/v1/openapi.json')).json;
    const summary = doc.paths['/api/v1/rankings'].get.summary as string;
    await page.waitForFunction(
      (s: string) =>
        (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText.includes(s),
      { timeout: 30_000 },
      summary,
    );
    await page.close();
  });

  it('error: no page made a request to another origin', () => {
    expect(foreign, foreign.join(' ')).toEqual([]);
  });
});
