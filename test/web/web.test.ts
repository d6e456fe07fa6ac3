import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A, B, listingId, seedFixture } from '../api/fixture.ts';
import { get } from '../api/helpers.ts';
import { freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { closeBrowser, executablePath, launchBrowser, newPage, openPage, rowsOf, serveApi } from './browser.ts';

/**
 * The web page and the docs page in a real headless Chromium (issue 13), against the published
 * fixture generation (test/api/fixture.ts): the page shows exactly what the API serves, the
 * category filter and the generation pin work, and no request leaves the origin.
 * Chromium: test/web/browser.ts.
 */
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

/**
 * Catalog text any Bazaar seller can write (issue 20), put on the listings of generation 1 of a
 * second fixture database: long digit runs after `,` `:` `[` and before `,` `]` (which a
 * regular expression over the whole body took for big JSON integers), quotes, backslashes, a
 * line separator, and markup. Listing 1 is A's first titled listing (A's display_name), 2 A's
 * other one, 3 B's (B's display_name); descriptions are not shown but are in the seller body.
 */
const HOSTILE = new Map<number, { title: string; description: string }>([
  [1, { title: 'Oracle ,12345678901234567890, feed', description: 'token ids [1234567890123456]' }],
  [
    2,
    {
      title: '<img src=x onerror=alert(1)> say \\":12345678901234567890, "hi" </script>\u2028end',
      description: '{"n":9007199254740993}',
    },
  ],
  [3, { title: 'Weather API:1234567890123456,fast', description: '</script><script>alert(2)</script>' }],
]);

/**
 * Makes the page parse as a browser without JSON.parse source text access would: the reviver is
 * called without its third argument (`context.source`), so the page must take its fallback.
 */
const WITHOUT_SOURCE_ACCESS = `{
  const parse = JSON.parse;
  JSON.parse = function (text, reviver) {
    return typeof reviver === 'function'
      ? parse.call(JSON, text, function (key, value) { return reviver.call(this, key, value); })
      : parse.call(JSON, text);
  };
}`;

describe.skipIf(!executablePath)('the web page in Chromium', () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  const foreign: string[] = [];
  const dialogs: string[] = []; // alert() and the like, opened by any page (injected markup would)
  // A second server whose generation 1 carries the hostile listings of HOSTILE.
  let hostileDb: TestDatabase;
  let hostileApp: FastifyInstance;
  let hostileBase: string;

  beforeAll(async () => {
    db = await freshDatabase('pglite');
    await seedFixture(db.db);
    // The operator says the chain is the public Base mainnet (PUBLIC_CHAIN=true): explorer links.
    ({ app, base } = await serveApi(db.db, { publicChain: true }));
    hostileDb = await freshDatabase('pglite');
    await seedFixture(hostileDb.db);
    for (const [n, text] of HOSTILE)
      await hostileDb.db
        .updateTable('gen_listings_fixed')
        .set(text)
        .where('generation', '=', 1)
        .where('listing_id', '=', listingId(n))
        .execute();
    // publicChain left out (false, as on the demo): no explorer link.
    ({ app: hostileApp, base: hostileBase } = await serveApi(hostileDb.db));
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await closeBrowser(browser);
    await app?.close();
    await db?.close();
    await hostileApp?.close();
    await hostileDb?.close();
  });

  /**
   * A page of `server` that refuses (and records) any request to another origin; `script` runs in
   * the page before its own scripts.
   */
  function open(url: string, server = base, script?: string): Promise<Page> {
    return openPage(browser, `${server}${url}`, {
      origin: server,
      onForeign: (u) => foreign.push(u),
      onDialog: (message) => dialogs.push(message),
      script,
    });
  }

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
    // (The README screenshot is written by test/web/people.test.ts, WRITE_SCREENSHOT=1.)
    await page.close();
  });

  it('behavior: the market view lists the days the API serves, and draws the chart', async () => {
    // (The totals are /api/v1/market/summary's, test/web/people.test.ts: the page sums nothing.)
    const page = await open('/?view=market');
    const days = exact((await get(app, '/api/v1/market/daily')).text).days as {
      day: string;
      volume_micro: string;
      payments: number;
    }[];
    expect((await rowsOf(page, 'market')).map((r) => [r[0], r[1], r[2]])).toEqual(
      days.map((d) => [d.day, usdcText(d.volume_micro), String(d.payments)]),
    );
    expect(await page.$('#market-chart canvas')).not.toBeNull();
    await page.close();
  });

  it('behavior: the API docs page renders the operations of the OpenAPI document, offline', async () => {
    const page = await newPage(browser, { origin: base, onForeign: (u) => foreign.push(u) });
    await page.goto(`${base}/api/v1/docs`, { waitUntil: 'networkidle0' });
    const doc = (await get(app, '/api/v1/openapi.json')).json;
    const summary = doc.paths['/api/v1/rankings'].get.summary as string;
    await page.waitForFunction(
      (s: string) =>
        (globalThis as unknown as { document: { body: { innerText: string } } }).document.body.innerText.includes(s),
      {},
      summary,
    );
    await page.close();
  });

  describe.each([
    ['JSON.parse source text access', undefined],
    ['the fallback for browsers without it', WITHOUT_SOURCE_ACCESS],
  ])('hostile catalog text, with %s', (_name, script) => {
    /** What the page did that it must not: elements made of catalog text, dialogs (an injected onerror=alert). */
    async function injected(page: Page): Promise<{ dialogs: string[]; elements: number }> {
      return { dialogs, elements: await page.$$eval('main img, main script', (els) => els.length) };
    }
    async function openHostile(url: string): Promise<Page> {
      const page = await open(url, hostileBase, script);
      // The mode under test is the one the page ran in.
      const sourceAccess = await page.evaluate(() => {
        let source: unknown;
        JSON.parse('7', (_k, v, context?: { source?: string }) => ((source = context?.source), v));
        return source === '7';
      });
      expect(sourceAccess).toBe(script === undefined);
      return page;
    }

    /** The page's state and its error message, if any ("Could not load: ..."). */
    const state = async (page: Page) => ({
      ready: await page.$eval('body', (el) => el.dataset.ready),
      alert: await page.$eval('main', (el) => el.querySelector('[role=alert]')?.textContent ?? null),
    });

    it('behavior: the rankings load, show the titles literally and the revenue above 2^53 exactly', async () => {
      const page = await openHostile('/');
      expect(await state(page)).toEqual({ ready: 'true', alert: null });
      const rows = await rowsOf(page, 'rankings');
      const short = (a: string) => `${a.slice(0, 8)}…${a.slice(-4)}`;
      // A (display_name: listing 1's title) and B (listing 3's), the numbers of test/api/fixture.ts
      expect(rows.map((r) => r.slice(0, 4))).toEqual([
        ['1', `${HOSTILE.get(1)!.title} ${short(A)}`, '9,007,199,254.740993', '3.00'],
        ['2', `${HOSTILE.get(3)!.title} ${short(B)}`, '82.00', '10.00'],
      ]);
      // sorting by revenue compares the exact integers: ascending puts B (82 USDC) first
      await page.click('table#rankings th:nth-child(3) button');
      await page.click('table#rankings th:nth-child(3) button');
      expect((await rowsOf(page, 'rankings')).map((r) => r[2])).toEqual(['82.00', '9,007,199,254.740993']);
      expect(await injected(page)).toEqual({ dialogs: [], elements: 0 });
      await page.close();
      expect((await fetch(`${hostileBase}/api/v1/meta`)).status).toBe(200);
    });

    it('behavior: a seller page loads, shows its titles literally and its revenue above 2^53 exactly', async () => {
      const page = await openHostile(`/?seller=${A}`);
      expect(await state(page)).toEqual({ ready: 'true', alert: null });
      expect(await page.$eval('main h2', (el) => el.textContent)).toBe(HOSTILE.get(1)!.title);
      expect(await page.$eval('[data-metric=revenue]', (el) => el.textContent)).toBe('9,007,199,254.740993 USDC');
      // listings 1 and 2, by listing_id; textContent is not trimmed here: the titles end in text
      const titles = await page.$$eval('table#listings tbody tr td:first-child', (tds) =>
        tds.map((td) => td.textContent),
      );
      expect(titles).toEqual([HOSTILE.get(1)!.title, HOSTILE.get(2)!.title]);
      // This server's chain is not public (/meta chain.public false): hashes as text, no explorer link.
      expect(await page.$$eval('table#payments a', (as) => as.length)).toBe(0);
      const payments = (await get(hostileApp, `/api/v1/sellers/${A}/payments?limit=20`)).json.payments as {
        tx_hash: string;
      }[];
      expect(await page.$$eval('table#payments code', (cs) => cs.map((c) => c.getAttribute('title')))).toEqual(
        payments.map((p) => p.tx_hash),
      );
      expect(await injected(page)).toEqual({ dialogs: [], elements: 0 });
      await page.close();
      const b = await openHostile(`/?seller=${B}`);
      expect(await state(b)).toEqual({ ready: 'true', alert: null });
      expect(await b.$eval('main h2', (el) => el.textContent)).toBe(HOSTILE.get(3)!.title);
      expect(await b.$eval('[data-metric=revenue]', (el) => el.textContent)).toBe('82.00 USDC');
      expect(await injected(b)).toEqual({ dialogs: [], elements: 0 });
      await b.close();
      expect((await fetch(`${hostileBase}/api/v1/meta`)).status).toBe(200);
    });

    it('args: edge cases of the parser, through the module the page loaded', async () => {
      const page = await openHostile('/?view=market');
      // Each integer beyond 2^53 - 1 = 9007199254740991 becomes its digits; the rest stays as JSON reads it.
      const text = String.raw`{"s":"a\\\":12345678901234567890,\"[9007199254740993]","t":"end\\","big":[9007199254740992,-9007199254740993,123456789012345678901234567890],"safe":[9007199254740991,-9007199254740991,0,1234567890123456],"other":[1.5,12345678901234567890.5,1e21,-2E-3,true,null],"e":"","\\":"x"}`;
      // A string, not a function: the test runner rewrites import() in the functions of this file.
      const parsed: unknown = await page.evaluate(
        `import('/web/app.js').then((app) => app.parseExact(${JSON.stringify(text)}))`,
      );
      expect(parsed).toEqual({
        s: 'a\\":12345678901234567890,"[9007199254740993]',
        t: 'end\\',
        big: ['9007199254740992', '-9007199254740993', '123456789012345678901234567890'],
        safe: [9007199254740991, -9007199254740991, 0, 1234567890123456],
        other: [1.5, 12345678901234567890.5, 1e21, -0.002, true, null],
        e: '',
        '\\': 'x',
      });
      await page.close();
    });
  });

  it('error: no page made a request to another origin', () => {
    expect(foreign, foreign.join(' ')).toEqual([]);
  });
});
