import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import puppeteer, { type Browser, type Page, type Viewport } from 'puppeteer-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import type { Schema } from '../../src/db/index.ts';
import { freshDatabase, type TestDatabase } from '../helpers/db.ts';

/**
 * The Chromium of the browser tests (test/web/*.test.ts): one browser per file (`launchBrowser`
 * in beforeAll, `closeBrowser` in afterAll, or `usePageFixture` with a database and the API), a
 * page per test (`openPage`, or `openReady`). Chromium:
 * `apt-get install -y chromium` (Debian), or CHROMIUM_PATH pointing elsewhere; without one the
 * files skip (`describe.skipIf(!executablePath)`).
 */
export const executablePath = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
].find((p): p is string => !!p && existsSync(p));

/**
 * How long the browser may take to start, a navigation to finish, or a page to reach a state
 * waited for: a bound on a hang, not a speed claim. Puppeteer's own default (30 s) is within
 * reach of a page's first load beside a CPU-heavy job on the 2-core CI machine; this stays under
 * the suite's 240 s a test (vitest.config.ts), so a timeout names what was waited for.
 */
export const WAIT_MS = 120_000;

/** The widths the page for people is checked at (issue 23): a desktop's and a phone's. */
export const VIEWPORTS: Viewport[] = [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
];

/** Headless Chromium, as every browser test runs it. */
export function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
    timeout: WAIT_MS,
  });
}

/** Closes the browser of `launchBrowser`, if it was launched. */
export async function closeBrowser(browser: Browser | undefined): Promise<void> {
  await browser?.close();
}

export interface PageOptions {
  /** The origin the page may load from; a request to any other (but data: URLs) is aborted. */
  origin: string;
  /** Each aborted request's URL. */
  onForeign: (url: string) => void;
  /** The page's size; 1200 x 900 unless given. */
  viewport?: Viewport;
  /** Each console error or warning and each uncaught page error, as text. Not collected without it. */
  onProblem?: (text: string) => void;
  /** Each dialog's message (alert(), confirm(): injected markup would open one); the dialog is dismissed. */
  onDialog?: (message: string) => void;
  /** A script that runs in the page before its own scripts. */
  script?: string;
}

/** A new page with `options` in force, before it goes anywhere. */
export async function newPage(browser: Browser, options: PageOptions): Promise<Page> {
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT_MS);
  page.setDefaultNavigationTimeout(WAIT_MS);
  await page.setViewport(options.viewport ?? { width: 1200, height: 900 });
  if (options.script) await page.evaluateOnNewDocument(options.script);
  const { onProblem, onDialog } = options;
  if (onProblem) {
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warn') onProblem(message.text());
    });
    page.on('pageerror', (error) => onProblem(String(error)));
  }
  if (onDialog) {
    page.on('dialog', (dialog) => {
      onDialog(dialog.message());
      void dialog.dismiss();
    });
  }
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    if (new URL(request.url()).origin !== options.origin && !request.url().startsWith('data:')) {
      options.onForeign(request.url());
      void request.abort();
    } else void request.continue();
  });
  return page;
}

/**
 * A new page at `url` (absolute), once the network is idle and the web page says it has drawn
 * (`body[data-ready]`: 'true', or 'error' when it could not load; web/app.js). The caller checks
 * which.
 */
export async function openPage(browser: Browser, url: string, options: PageOptions): Promise<Page> {
  const page = await newPage(browser, options);
  await page.goto(url, { waitUntil: 'networkidle0' });
  await page.waitForSelector('body[data-ready]');
  return page;
}

/** `openPage`, and the page says it has drawn ('true', not 'error'). */
export async function openReady(browser: Browser, url: string, options: PageOptions): Promise<Page> {
  const page = await openPage(browser, url, options);
  expect(await page.$eval('body', (el) => el.dataset.ready)).toBe('true');
  return page;
}

/** Each body row of `table#<id>`: the text of its cells, trimmed. */
export function rowsOf(page: Page, id: string): Promise<string[][]> {
  return page.$$eval(`table#${id} tbody tr`, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())),
  );
}

/** The API over `db` on 127.0.0.1 (a rate limit no test reaches); `base` is its origin. */
export async function serveApi(
  db: Kysely<Schema>,
  options: { publicChain?: boolean } = {},
): Promise<{ app: FastifyInstance; base: string }> {
  const app = await buildApi(db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900, ...options });
  return { app, base: await app.listen({ port: 0, host: '127.0.0.1' }) };
}

/** What `usePageFixture` gives a describe block once its beforeAll has run. */
export interface PageFixture {
  db: TestDatabase;
  app: FastifyInstance;
  /** The API's origin (no trailing slash). */
  base: string;
  browser: Browser;
}

/**
 * For a file's describe block: in beforeAll a fresh embedded database seeded by `seed`, the API
 * serving it (`serveApi` with `options`) and Chromium (`launchBrowser`); all closed in afterAll.
 * The fields are set once beforeAll has run.
 */
export function usePageFixture(
  seed: (db: Kysely<Schema>) => Promise<unknown>,
  options: { publicChain?: boolean } = {},
): PageFixture {
  const fixture = {} as PageFixture;
  beforeAll(async () => {
    fixture.db = await freshDatabase('pglite');
    await seed(fixture.db.db);
    ({ app: fixture.app, base: fixture.base } = await serveApi(fixture.db.db, options));
    fixture.browser = await launchBrowser();
  });
  afterAll(async () => {
    await closeBrowser(fixture.browser);
    await fixture.app?.close();
    await fixture.db?.close();
  });
  return fixture;
}
