import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { GLOSSARY, type GlossaryKey } from '../../src/api/glossary.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import { A, B, C, D } from '../api/fixture.ts';
import { seedFixture } from '../api/fixture.ts';
import { executablePath, openReady, usePageFixture, VIEWPORTS } from './browser.ts';

/**
 * The page for people (issue 23) in a real headless Chromium, at 1280 px and at 390 px, against
 * the published fixture generation (test/api/fixture.ts; the expected values below are worked out
 * by hand from its PAYMENTS and MARKET): labels explained on hover and on keyboard focus from the
 * one glossary, charts with every day of the window and zero days at 0 on axes from 0, a page
 * usable by keyboard only and without sideways scrolling at 390 px, no console error or warning,
 * and no request to another origin. Chromium: test/web/browser.ts.
 */

/**
 * The days of the fixture's window, by hand: (2025-12-02T03:00Z, 2026-01-01T03:00Z] touches the
 * 31 UTC days 2025-12-02 .. 2026-01-01.
 */
const WINDOW_DAYS = 31;
const dayIndex = (day: string) => (Date.parse(`${day}T00:00:00Z`) - Date.parse('2025-12-02T00:00:00Z')) / 86_400_000;

/**
 * Seller A's payments per day, by hand from PAYMENTS (block time = AS_OF_TS - 2 x (AS_OF_BLOCK -
 * block)): tx 1 on 12-08 (1 USDC), tx 2 on 12-11 (2 USDC), tx 3 and 4 on 12-13 (3 + 4 USDC),
 * tx 5 on 12-20 (9,007,199,244.740993 USDC). Every other day of the window: 0.
 */
const A_PAYMENTS_BY_DAY: Record<string, number> = {
  '2025-12-08': 1,
  '2025-12-11': 1,
  '2025-12-13': 2,
  '2025-12-20': 1,
};
/** The market's payments per day, from MARKET: 12-29 served with 0, 12-30 1, 12-31 2; the rest not served, drawn at 0. */
const MARKET_PAYMENTS_BY_DAY: Record<string, number> = { '2025-12-30': 1, '2025-12-31': 2 };

const perDay = (counts: Record<string, number>) => {
  const values = new Array<number>(WINDOW_DAYS).fill(0);
  for (const [day, n] of Object.entries(counts)) values[dayIndex(day)] = n;
  return values;
};

// One database, server and browser for both widths (a page per test): they only read.
describe.skipIf(!executablePath)('the page for people in Chromium', () => {
  const web = usePageFixture(
    async (db) => {
      await seedFixture(db);
      // The fixture's method 1.0.0 generation has no daily series: A's, by hand from PAYMENTS (above).
      await db
        .insertInto('gen_seller_daily_fixed')
        .values(
          [
            ['2025-12-08', 1, '1000000', 1],
            ['2025-12-11', 1, '2000000', 1],
            ['2025-12-13', 2, '7000000', 2],
            ['2025-12-20', 1, '9007199244740993', 1],
          ].map(([day, payments, revenue_micro, payers]) => ({
            generation: 1,
            seller_address: A,
            day: day as string,
            payments: payments as number,
            revenue_micro: revenue_micro as string,
            payers: payers as number,
          })),
        )
        .execute();
    },
    { publicChain: true },
  );

  describe.each(VIEWPORTS)('the page for people at $width px', ({ width, height }) => {
    const foreign: string[] = [];
    const consoleProblems: string[] = [];

    /** A page that records console errors and warnings and refuses any request to another origin. */
    const open = (url: string): Promise<Page> =>
      openReady(web.browser, `${web.base}${url}`, {
        origin: web.base,
        onForeign: (u) => foreign.push(u),
        viewport: { width, height },
        onProblem: (text) => consoleProblems.push(`${url}: ${text}`),
      });

    /** The tooltip as shown: its text, or null when hidden. */
    const tooltip = (page: Page) =>
      page.$eval('#tooltip', (el) => ((el as unknown as { hidden: boolean }).hidden ? null : el.textContent));

    /** Presses Tab until the focused element matches `selector` (at most `max` times); false if never. */
    async function tabTo(page: Page, selector: string, max = 60): Promise<boolean> {
      for (let i = 0; i < max; i++) {
        await page.keyboard.press('Tab');
        if (await page.evaluate(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return true;
      }
      return false;
    }

    /** Whether the page scrolls sideways (it must not: wide tables scroll inside their own box). */
    const scrollsSideways = (page: Page) =>
      page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth');

    it('behavior: every label is explained by the glossary text, on hover and on keyboard focus', async () => {
      const page = await open(`/?seller=${A}`);
      // Every term's description is the glossary's text of its key.
      // (a string: the test runner rewrites the functions of this file, and `document` is the page's)
      const described = (await page.evaluate(`[...document.querySelectorAll('[data-term]')].map((el) => ({
      key: el.getAttribute('data-term'),
      text: document.getElementById(el.getAttribute('aria-describedby'))?.textContent ?? null,
    }))`)) as { key: string; text: string | null }[];
      const keys = new Set(described.map((d) => d.key));
      for (const key of [
        'tier',
        'evidence_state',
        'verified_revenue',
        'median_payment',
        'payments',
        'payers',
        'farm_flag',
      ])
        expect(keys, key).toContain(key);
      expect(keys).toContain('evidence_state.verified'); // A's evidence state, fixture SELLERS
      for (const d of described) expect(d.text, d.key).toBe(GLOSSARY[d.key as GlossaryKey].text);

      // Hover: the evidence label shows its text; moving away hides it.
      expect(await tooltip(page)).toBeNull();
      await page.hover('dt [data-term="evidence_state"]');
      expect(await tooltip(page)).toBe(GLOSSARY.evidence_state.text);
      await page.mouse.move(1, 1);
      expect(await tooltip(page)).toBeNull();

      // Keyboard: Tab reaches the tier label, which shows its text; Escape hides it.
      expect(await tabTo(page, 'dt [data-term="tier"]')).toBe(true);
      expect(await tooltip(page)).toBe(GLOSSARY.tier.text);
      await page.keyboard.press('Escape');
      expect(await tooltip(page)).toBeNull();
      await page.close();

      // A column header of the rankings: hover and focus of its sort button.
      const rankings = await open('/');
      await rankings.hover('table#rankings button[data-term="payers"]');
      expect(await tooltip(rankings)).toBe(GLOSSARY.payers.text);
      // (the pointer leaves first: at 390 px the focus scrolls the table inside its box, which can
      // slide another header under a resting pointer, and that header's mouseover shows its text)
      await rankings.mouse.move(1, 1);
      expect(await tooltip(rankings)).toBeNull();
      expect(await tabTo(rankings, 'table#rankings button[data-term="median_payment"]')).toBe(true);
      expect(await tooltip(rankings)).toBe(GLOSSARY.median_payment.text);
      await rankings.close();
    });

    it("behavior: the seller's chart draws every day of the window, days without payments at 0, axes from 0", async () => {
      const page = await open(`/?seller=${A}`);
      const drawn = await page.$eval('#seller-chart', (el) => {
        const u = (el as unknown as { uplot: { data: number[][]; scales: Record<string, { min: number }> } }).uplot;
        return {
          days: u.data[0]!.map((t) => new Date(t * 1000).toISOString().slice(0, 10)),
          payments: u.data[2],
          usdcMin: u.scales.usdc!.min,
          countMin: u.scales.n!.min,
          axes: [...el.querySelectorAll('.u-axis')].map((a) => a.textContent),
        };
      });
      expect(drawn.days).toHaveLength(WINDOW_DAYS);
      expect([drawn.days[0], drawn.days.at(-1)]).toEqual(['2025-12-02', '2026-01-01']);
      expect(drawn.payments).toEqual(perDay(A_PAYMENTS_BY_DAY));
      expect([drawn.usdcMin, drawn.countMin]).toEqual([0, 0]);
      expect(await page.$eval('#seller-chart', (el) => el.textContent)).toMatch(/USDC/);
      await page.close();
    });

    it('behavior: the market chart draws every day of the window at 0 where nothing was paid; sparklines from 0', async () => {
      const page = await open('/?view=market');
      const drawn = await page.$eval('#market-chart', (el) => {
        const u = (el as unknown as { uplot: { data: number[][]; scales: Record<string, { min: number }> } }).uplot;
        return { days: u.data[0]!.length, payments: u.data[2], usdcMin: u.scales.usdc!.min, countMin: u.scales.n!.min };
      });
      expect(drawn.days).toBe(WINDOW_DAYS);
      expect(drawn.payments).toEqual(perDay(MARKET_PAYMENTS_BY_DAY));
      expect([drawn.usdcMin, drawn.countMin]).toEqual([0, 0]);
      // The payments sparkline: 31 points, all on the baseline (y = 26 of 28) but the last three days'
      // two non-zero ones, the highest (2 payments, 12-31) at the top (y = 2).
      const spark = await page.$eval('#market-summary tr[data-figure="payments"] svg', (svg) => ({
        points: svg.getAttribute('data-points'),
        ys: svg
          .querySelector('polyline')!
          .getAttribute('points')!
          .split(' ')
          .map((p: string) => Number(p.split(',')[1])),
      }));
      expect(spark.points).toBe(String(WINDOW_DAYS));
      expect(spark.ys).toEqual(perDay(MARKET_PAYMENTS_BY_DAY).map((n) => 26 - n * 12));
      await page.close();
    });

    it('behavior: usable by keyboard only: sort a column, open a seller, come back', async () => {
      const page = await open('/');
      expect(await tabTo(page, 'table#rankings button[data-term="payments"]')).toBe(true);
      await page.keyboard.press('Enter'); // descending: A 5 payments, B 10 (fixture SELLERS)
      const order = () =>
        page.$$eval('table#rankings tbody tr td:nth-child(2) .addr', (els) => els.map((e) => e.textContent));
      const short = (a: string) => `${a.slice(0, 8)}…${a.slice(-4)}`;
      expect(await order()).toEqual([short(B), short(A)]);
      await page.keyboard.press('Space'); // ascending
      expect(await order()).toEqual([short(A), short(B)]);
      expect(await tabTo(page, `table#rankings a[href*="${B}"]`)).toBe(true);
      await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
      await page.waitForSelector('body[data-ready]');
      expect(new URL(page.url()).searchParams.get('seller')).toBe(B);
      expect(await page.$eval('[data-metric=revenue]', (el) => el.textContent)).toBe('82.00 USDC');
      await page.close();
    });

    /** The sellers the directory shows, by address, in its order. */
    const directoryRows = (page: Page) =>
      page.$$eval('table#directory tbody tr td:first-child a', (as) =>
        as.map((a) => new URL(a.getAttribute('href')!, 'http://x').searchParams.get('seller')),
      );
    const urlState = (page: Page) => Object.fromEntries(new URL(page.url()).searchParams);
    /** Waits until the directory drew the state of the URL (each change draws it again). */
    const drawn = (page: Page, rows: (string | null)[]) =>
      page.waitForFunction(
        `JSON.stringify([...document.querySelectorAll('table#directory tbody tr td:first-child a')].map((a) => new URL(a.href).searchParams.get('seller'))) === ${JSON.stringify(JSON.stringify(rows))}`,
      );

    it('behavior: the directory filters and sorts every seller, its state in the URL (reload, back, forward), with a CSV of the view', async () => {
      // fixture SELLERS: revenue A > B > C > D = 0; payments B 10, A 5, C 2, D 0; B flagged (top_payer_share>0.9);
      // evidence A, B verified, C insufficient, D not_observed
      const page = await open('/?view=directory');
      expect(await directoryRows(page)).toEqual([A, B, C, D]);
      expect(await page.$eval('#directory-count', (el) => el.textContent)).toBe('4 sellers');
      await page.select('#d-sort', 'payments');
      await drawn(page, [B, A, C, D]);
      expect(urlState(page)).toEqual({ view: 'directory', sort: 'payments' });
      await page.select('#d-farm_flag', '1');
      await drawn(page, [B]);
      expect(urlState(page)).toEqual({ view: 'directory', sort: 'payments', farm_flag: '1' });
      const csvHref = await page.$eval('#directory-csv', (a) => a.getAttribute('href')!);
      expect(Object.fromEntries(new URL(csvHref, web.base).searchParams)).toEqual({
        sort: 'payments',
        farm_flag: '1',
        format: 'csv',
      });
      const csv = await (await fetch(new URL(csvHref, web.base))).text();
      expect(csv).toContain(B);
      expect(csv).not.toContain(A);
      await page.reload({ waitUntil: 'networkidle0' });
      await drawn(page, [B]);
      expect(await page.$eval('#d-farm_flag', (el) => (el as unknown as { value: string }).value)).toBe('1');
      await page.goBack();
      await drawn(page, [B, A, C, D]);
      expect(await page.$eval('#d-farm_flag', (el) => (el as unknown as { value: string }).value)).toBe('');
      await page.goForward();
      await drawn(page, [B]);
      await page.select('#d-farm_flag', '');
      await page.select('#d-evidence_state', 'insufficient');
      await drawn(page, [C]);
      await page.close();
    });

    it('behavior: the search box finds sellers by a plural, a prefix and several words', async () => {
      const page = await open('/?view=directory');
      const query = () => page.$eval('#d-q', (el) => (el as unknown as { value: string }).value);
      // (each search below draws other rows than the one before, so `drawn` waits for its answer)
      const search = async (q: string, rows: string[]) => {
        await page.click('#d-q', { count: 3 });
        await page.type('#d-q', q);
        await page.keyboard.press('Enter');
        await drawn(page, rows);
        expect(urlState(page)).toEqual({ view: 'directory', q });
      };
      // A plural as the catalog writes it: A's listing 1 says "LLM completions" (fixture LISTINGS).
      await search('completions', [A]);
      // A prefix of 3 letters that is no word of the catalog: C's title "Gamma search".
      await search('gam', [C]);
      // A plural the catalog does not write: A's title is "Alpha inference" (B's and D's listings are
      // in the inference category, which is no word of their text).
      await search('inferences', [A]);
      // Two words of C's title, typed in the other case.
      await search('SEARCH gamma', [C]);
      await page.goBack();
      await drawn(page, [A]);
      expect(await query()).toBe('inferences');
      await page.goBack();
      await drawn(page, [C]);
      expect(await query()).toBe('gam');
      await page.close();
    });

    it(`behavior: at ${width} px no page scrolls sideways`, async () => {
      for (const url of ['/', '/?view=market', `/?seller=${A}`, '/?view=directory']) {
        const page = await open(url);
        expect(await scrollsSideways(page), url).toBe(false);
        if (process.env.WRITE_SCREENSHOT && width === 1280 && url === '/?view=directory') {
          mkdirSync(path.join(projectRoot, 'docs/img'), { recursive: true });
          await page.screenshot({ path: path.join(projectRoot, 'docs/img/web.png'), fullPage: true });
        }
        await page.close();
      }
    });

    it('error: no console error or warning, and no request to another origin', () => {
      expect(consoleProblems, consoleProblems.join('\n')).toEqual([]);
      expect(foreign, foreign.join(' ')).toEqual([]);
    });
  });
});
