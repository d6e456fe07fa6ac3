import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { publishGeneration } from '../../src/publish/index.ts';
import { SOURCES } from '../api/fixture.ts';
import { loadGroups, S } from '../method/fixture-groups.ts';
import { compute } from '../method/setup.ts';
import { executablePath, openReady, rowsOf, usePageFixture, VIEWPORTS } from './browser.ts';

/**
 * Operator groups and the market summary on the page (issue 23), at 1280 and 390 px, over the
 * economy of test/method/fixture-groups.ts computed by the method (3.0.0): its numbers are worked
 * out by hand in test/method/groups.test.ts and test/api/operators.test.ts. One group {A, B, C}
 * on hosts h1.example and h2.example: 6 payments, 4 distinct payers, 700 micro-USDC, 660 external;
 * member A 3 payments, 2 payers, 190, external 150. Market: last 7 days 5 payments, 1,347
 * micro-USDC, 3 payers, 4 sellers paid; the 7 before 2, 350, 2, 2; 30 days 8, 1,707, 4, 5.
 * Chromium: test/web/browser.ts.
 */
const GROUP = `op_${'a'.repeat(40)}`;

// One database, server and browser for both widths (a page per test): they only read.
describe.skipIf(!executablePath)('operator groups and the market summary in Chromium', () => {
  const web = usePageFixture(async (db) => {
    const snapshotId = await loadGroups(db);
    await publishGeneration(db, await compute(db, snapshotId, { sources: SOURCES, methodVersion: '3.0.0' }));
  });

  describe.each(VIEWPORTS)('at $width px', ({ width, height }) => {
    const problems: string[] = [];

    const open = (url: string): Promise<Page> =>
      openReady(web.browser, `${web.base}${url}`, {
        origin: web.base,
        onForeign: (u) => problems.push(`foreign request ${u}`),
        viewport: { width, height },
        onProblem: (text) => problems.push(`${url}: ${text}`),
      });

    it('default: the operator groups, and one group with its members', async () => {
      const page = await open('/?view=operators');
      // Group, Sellers, Hosts, Revenue, External, Payments, Payers (USDC: 700 micro = 0.0007)
      expect(await rowsOf(page, 'operators')).toEqual([
        [`${GROUP.slice(0, 13)}…`, '3', 'h1.example, h2.example', '0.0007', '0.00066', '6', '4'],
      ]);
      await Promise.all([page.waitForNavigation(), page.click('table#operators tbody a')]);
      await page.waitForSelector('body[data-ready]');
      expect(new URL(page.url()).searchParams.get('operator')).toBe(GROUP);
      const metric = (name: string) => page.$eval(`[data-metric=${name}]`, (el) => el.textContent);
      expect(await metric('revenue')).toBe('0.0007 USDC');
      expect(await metric('payers')).toBe('4'); // distinct across the group, as the method counts them
      const members = await rowsOf(page, 'members');
      const short = (a: string) => `${a.slice(0, 8)}…${a.slice(-4)}`;
      expect(members.map((m) => m[0])).toEqual([S.A, S.B, S.C].map(short));
      // A: Revenue 190, External 150, Payments 3, Payers 2 (columns 3.. after Seller, Tier, Evidence)
      expect(members[0]!.slice(3)).toEqual(['0.00019', '0.00015', '3', '2']);
      await page.close();
      // A member's page names its group, linked.
      const seller = await open(`/?seller=${S.B}`);
      expect(await seller.$eval('[data-metric=operator-group] a', (a) => a.getAttribute('href'))).toBe(
        `/?view=operators&operator=${GROUP}`,
      );
      await seller.close();
    });

    it('default: the market summary shows the totals the API computed, and the change as a percentage', async () => {
      const page = await open('/?view=market');
      const figure = (key: string) =>
        page.$$eval(`#market-summary tr[data-figure="${key}"] td[data-period]`, (tds) =>
          tds.map((td) => td.textContent!.trim()),
        );
      // last 7 days, 7 days before, change ((5 - 2) / 2 = +150 %), 30 days
      expect(await figure('payments')).toEqual(['5', '2', '+150 %', '8']);
      // 1,347 and 350 micro-USDC: change (1347 - 350) / 350 = 2.848571 -> +284.9 %
      expect(await figure('volume')).toEqual(['0.001347 USDC', '0.00035 USDC', '+284.9 %', '0.001707 USDC']);
      expect(await figure('payers')).toEqual(['3', '2', '+50 %', '4']);
      expect(await figure('sellers_paid')).toEqual(['4', '2', '+100 %', '5']);
      expect(await page.$$eval('#market-summary svg.spark', (s) => s.length)).toBe(5); // external volume too (3.0.0)
      await page.close();
    });

    it('error: no console error or warning, and no request to another origin', () => {
      expect(problems, problems.join('\n')).toEqual([]);
    });
  });
});
