import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { A, B, txHash } from '../api/fixture.ts';
import { A_LABELS, E, EXTERNAL_VOLUME, F, GEN2, seedFixture3, SELLERS3 } from '../api/fixture3.ts';
import { executablePath, openReady, rowsOf, usePageFixture } from './browser.ts';

/**
 * The web page on a method 3.0.0 generation (test/api/fixture3.ts; its table gives the expected
 * values) in a real headless Chromium: external revenue and the order by it in the rankings,
 * by_class, internal payments and each payment's class on a seller page, external volume in the
 * market; and the 2.0.0 generation beside it, pinned, shown as before. Chromium: test/web/browser.ts.
 */

/** micro-USDC as the page shows USDC, computed here with bigints. */
function usdcText(micro: bigint): string {
  const whole = (micro / 1_000_000n).toLocaleString('en-US');
  const frac = (micro % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${frac}`;
}
const short = (a: string) => `${a.slice(0, 8)}…${a.slice(-4)}`;
const seller3 = (address: string) => SELLERS3.find((s) => s.address === address)!;

describe.skipIf(!executablePath)('the web page on a method 3.0.0 generation, in Chromium', () => {
  const web = usePageFixture(seedFixture3);
  const foreign: string[] = [];

  const open = (url: string): Promise<Page> =>
    openReady(web.browser, `${web.base}${url}`, { origin: web.base, onForeign: (u) => foreign.push(u) });
  const headersOf = (page: Page, table: string) =>
    page.$$eval(`table#${table} thead th`, (ths) => ths.map((th) => th.textContent!.trim()));

  it('default: the rankings show external revenue; the order by it ranks as the API does', async () => {
    const page = await open('/');
    expect((await headersOf(page, 'rankings')).slice(0, 4)).toEqual([
      'Rank',
      'Seller',
      'Revenue (USDC)',
      'External (USDC)',
    ]);
    const rows = await rowsOf(page, 'rankings');
    expect(rows.map((r) => [r[0], r[1]!.slice(-short(A).length), r[3]])).toEqual(
      [A, B, E, F].map((s, i) => [String(i + 1), short(s), usdcText(seller3(s).external.revenue)]),
    );
    await page.close();

    const external = await open('/?sort=external_revenue');
    // fixture3.ts: E 50M, A 10M (rank 1), F 10M (rank 4), B 2M
    expect((await rowsOf(external, 'rankings')).map((r) => [r[0], r[1]!.slice(-short(A).length)])).toEqual(
      [E, A, F, B].map((s, i) => [String(i + 1), short(s)]),
    );
    expect(await external.$eval('#sort', (el) => (el as unknown as { value: string }).value)).toBe('external_revenue');
    expect(await external.$eval('#rankings-csv', (el) => el.getAttribute('href'))).toContain('sort=external_revenue');
    expect(await external.$eval('main h2', (el) => el.textContent)).toBe('Verified sellers by 30-day external revenue');
    await external.close();
  });

  it("behavior: a seller page shows the external metrics, by_class, internal payments and each payment's class", async () => {
    const page = await open(`/?seller=${A}`);
    const metric = (name: string) => page.$eval(`[data-metric=${name}]`, (el) => el.textContent);
    expect(await metric('external-revenue')).toBe('10.00 USDC');
    expect(await metric('external-payments')).toBe('4');
    expect(await metric('external-payers')).toBe('3');
    expect(await rowsOf(page, 'by-class')).toEqual([
      ['EIP-3009', '2', '9,007,199,245.740993'],
      ['Permit2 exact', '1', '2.00'],
      ['Permit2 upto', '1', '3.00'],
      ['Batch settlement (claims)', '1', '4.00'],
    ]);
    expect(await rowsOf(page, 'internal')).toEqual([
      ['seller-funded', '1', '9,007,199,244.740993', '1'],
      ['same operator', '0', '0.00', '0'],
    ]);
    const labels: Record<string, string> = {
      eip3009: 'EIP-3009',
      permit2_exact: 'Permit2 exact',
      permit2_upto: 'Permit2 upto',
      batch_settlement: 'Batch settlement (claims)',
    };
    expect((await rowsOf(page, 'payments')).map((r) => r.slice(-3))).toEqual(
      [5, 4, 3, 2, 1].map((tx) => {
        const [cls, reason] = A_LABELS.get(tx)!;
        return [
          labels[cls],
          reason === 'seller_funded' ? 'seller-funded' : '–',
          `${txHash(tx).slice(0, 8)}…${txHash(tx).slice(-4)}`,
        ];
      }),
    );
    await page.close();
  });

  it('behavior: the market shows each day’s external volume', async () => {
    const page = await open('/?view=market');
    const headers = await headersOf(page, 'market');
    const at = headers.indexOf('External (USDC)');
    expect(at).toBe(2);
    expect((await rowsOf(page, 'market')).map((r) => [r[0], r[at]])).toEqual(
      [...EXTERNAL_VOLUME].reverse().map(([day, v]) => [day, usdcText(v)]),
    );
    await page.close();
  });

  it('behavior: the 2.0.0 generation, pinned, is shown as before: no external column, order or class tables', async () => {
    const page = await open(`/?generation=${GEN2}`);
    expect(await headersOf(page, 'rankings')).not.toContain('External (USDC)');
    expect(await page.$('#sort')).toBeNull();
    expect((await rowsOf(page, 'rankings')).map((r) => r[0])).toEqual(['1', '2']);
    await page.close();
    const sellerPage = await open(`/?seller=${F}&generation=${GEN2}`);
    expect(await sellerPage.$('table#by-class')).toBeNull();
    expect(await sellerPage.$('table#internal')).toBeNull();
    expect(await sellerPage.$('[data-metric=external-revenue]')).toBeNull();
    expect(await headersOf(sellerPage, 'payments')).not.toContain('Class');
    await sellerPage.close();
    const market = await open(`/?view=market&generation=${GEN2}`);
    expect(await headersOf(market, 'market')).not.toContain('External (USDC)');
    await market.close();
  });

  it('error: no page made a request to another origin', () => {
    expect(foreign, foreign.join(' ')).toEqual([]);
  });
});
