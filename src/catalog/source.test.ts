import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BASE_CHAIN_ID, BASE_USDC } from '../config/index.ts';
import { TallyError, TemporaryError, isTemporary } from '../lib/errors.ts';
import { backends, freshDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { buildCatalog } from './build.ts';
import { ingestCatalog } from './ingest.ts';
import { readCatalog } from './source.ts';

const OPTIONS = { chainId: BASE_CHAIN_ID, usdcAddress: BASE_USDC };
const PAY = '0x3d054a66d0c2a3db1e13eb5ea2e29893aba5e5eb';
// Seven distinct base USDC items: three pages of 3, 3 and 1 at pageSize 3.
const ITEMS = Array.from({ length: 7 }, (_, i) => ({
  x402Version: 2,
  type: 'http',
  resource: `https://svc${i}.example.com/api`,
  lastUpdated: '2025-12-01T00:00:00Z',
  accepts: [
    {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: String(1000 * (i + 1)),
      payTo: PAY,
      asset: BASE_USDC,
      maxTimeoutSeconds: 60,
    },
  ],
}));

type Handler = (offset: number, limit: number, req: IncomingMessage, res: ServerResponse) => void;
let server: Server;
let base: string;
let handler: Handler;
const seen: string[] = [];

function page(res: ServerResponse, offset: number, limit: number, total = ITEMS.length) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      x402Version: 2,
      items: ITEMS.slice(offset, offset + limit),
      pagination: { limit, offset, total },
    }),
  );
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    seen.push(`${url.pathname}?${url.searchParams.toString()}`);
    handler(Number(url.searchParams.get('offset')), Number(url.searchParams.get('limit')), req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/secret-key-123/discovery/resources`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  seen.length = 0;
});

function recorder() {
  const delays: number[] = [];
  return { delays, sleep: async (ms: number) => void delays.push(ms) };
}

describe('readCatalog over HTTP', () => {
  it('default: reads every page, waits the Retry-After of a 429 once, and yields the whole catalog', async () => {
    let limited = false;
    handler = (offset, limit, _req, res) => {
      if (offset === 3 && !limited) {
        limited = true;
        res.writeHead(429, { 'retry-after': '2' });
        return res.end('{"error":"rate limited"}');
      }
      page(res, offset, limit);
    };
    const { delays, sleep } = recorder();
    const catalog = await readCatalog(base, { ...OPTIONS, pageSize: 3, sleep });
    expect(seen).toEqual([0, 3, 3, 6].map((o) => `/secret-key-123/discovery/resources?limit=3&offset=${o}`));
    expect(delays).toEqual([2000]);
    expect(catalog.items).toEqual(ITEMS);
    expect(catalog.sha256).toBe(buildCatalog(ITEMS, { source: 'x', fetchedAt: new Date(0) }, OPTIONS).sha256);
    expect(catalog.listings).toHaveLength(7);
    expect(catalog.source).toBe(`http://127.0.0.1:${(server.address() as AddressInfo).port}/…`);
  });

  it('behavior: without a total, pages continue until one is shorter than the limit the server applied', async () => {
    // The server caps every page at 2 items whatever was asked, and announces no total.
    handler = (offset, _limit, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ items: ITEMS.slice(offset, offset + 2), pagination: { limit: 2, offset } }));
    };
    const catalog = await readCatalog(base, { ...OPTIONS, pageSize: 1000 });
    expect(seen.map((s) => s.split('offset=')[1])).toEqual(['0', '2', '4', '6']);
    expect(catalog.items).toEqual(ITEMS);
  });

  it('error: a source failing mid-way stays a temporary failure after backoff, with the URL redacted', async () => {
    handler = (offset, limit, _req, res) => {
      if (offset >= 3) {
        res.writeHead(503);
        return res.end();
      }
      page(res, offset, limit);
    };
    const { delays, sleep } = recorder();
    const error = await readCatalog(base, { ...OPTIONS, pageSize: 3, maxAttempts: 4, retryBaseMs: 100, sleep }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TemporaryError);
    expect(isTemporary(error)).toBe(true);
    expect(delays).toEqual([100, 200, 400]);
    expect(String((error as Error).message)).not.toContain('secret-key-123');
  });

  it('error: a connection dropped in the middle of a page is retried, then temporary', async () => {
    handler = (offset, limit, _req, res) => {
      if (offset >= 3) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"items":[');
        return void setImmediate(() => res.destroy());
      }
      page(res, offset, limit);
    };
    const { delays, sleep } = recorder();
    const error = await readCatalog(base, { ...OPTIONS, pageSize: 3, maxAttempts: 3, retryBaseMs: 1, sleep }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TemporaryError);
    expect(delays).toHaveLength(2);
  });

  it('error: no answer within the timeout is temporary', async () => {
    handler = () => {}; // never answers
    const { sleep } = recorder();
    const error = await readCatalog(base, { ...OPTIONS, timeoutMs: 100, maxAttempts: 2, sleep }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TemporaryError);
    expect((error as Error).message).toContain('no answer within 100 ms');
  });

  it('error: pages that do not add up to the announced total are not a catalog', async () => {
    // The total grows between pages: the catalog changed while it was read.
    handler = (offset, limit, _req, res) => page(res, offset, limit, offset === 0 ? 7 : 9);
    const error = await readCatalog(base, { ...OPTIONS, pageSize: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporaryError);
  });

  it('error: an endpoint that ignores offset is refused rather than read twice', async () => {
    handler = (_offset, limit, _req, res) => page(res, 0, limit);
    const error = await readCatalog(base, { ...OPTIONS, pageSize: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TallyError);
    expect(isTemporary(error)).toBe(false);
  });

  it('behavior: a decimal Retry-After is waited; one over MAX_RETRY_AFTER_MS is not: temporary at once', async () => {
    let calls = 0;
    handler = (offset, limit, _req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(425, { 'retry-after': '1.5' }); // 425 Too Early: retried, as the RPC client retries it
        return res.end();
      }
      if (offset >= 3) {
        res.writeHead(429, { 'retry-after': '3600' });
        return res.end();
      }
      page(res, offset, limit);
    };
    const { delays, sleep } = recorder();
    const error = await readCatalog(base, { ...OPTIONS, pageSize: 3, sleep }).catch((e: unknown) => e);
    expect(isTemporary(error)).toBe(true);
    expect(delays).toEqual([1500]);
  });

  it('behavior: a stop signal ends the wait between attempts at once', async () => {
    handler = (_o, _l, _req, res) => {
      res.writeHead(503, { 'retry-after': '100' });
      res.end();
    };
    const stop = new AbortController();
    const reading = readCatalog(base, { ...OPTIONS, signal: stop.signal }).catch((e: unknown) => e);
    // the first answer has come once the server saw the request; then the read sleeps 100 s
    while (seen.length === 0) await new Promise((resolve) => setImmediate(resolve));
    stop.abort(new Error('stopped by the test'));
    const error = await reading;
    expect((error as Error).message).toBe('stopped by the test');
  });

  it('error: a 404 is a configuration problem, not temporary', async () => {
    handler = (_o, _l, _req, res) => {
      res.writeHead(404);
      res.end();
    };
    const { delays, sleep } = recorder();
    const error = await readCatalog(base, { ...OPTIONS, sleep }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TallyError);
    expect(isTemporary(error)).toBe(false);
    expect(delays).toEqual([]);
  });
});

describe.each(backends())('ingestCatalog on $backend', ({ backend }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(backend);
  });
  afterAll(async () => database.close());
  const snapshots = async () =>
    (await database.db.selectFrom('catalog_snapshots').select('snapshot_id').execute()).length;

  it('error: a source failing mid-way stores nothing', async () => {
    const before = await snapshots();
    handler = (offset, limit, _req, res) => {
      if (offset >= 3) return void res.destroy();
      page(res, offset, limit);
    };
    const { sleep } = recorder();
    await expect(
      ingestCatalog(database.db, base, { ...OPTIONS, pageSize: 3, maxAttempts: 2, sleep }),
    ).rejects.toBeInstanceOf(TemporaryError);
    expect(await snapshots()).toBe(before);
  });

  it('default: a whole read is stored as one snapshot with its items', async () => {
    const before = await snapshots();
    handler = (offset, limit, _req, res) => page(res, offset, limit);
    const { snapshotId, catalog } = await ingestCatalog(database.db, base, { ...OPTIONS, pageSize: 1000 });
    expect(await snapshots()).toBe(before + 1);
    const snapshot = await database.db
      .selectFrom('catalog_snapshots')
      .selectAll()
      .where('snapshot_id', '=', snapshotId)
      .executeTakeFirstOrThrow();
    expect([snapshot.items_count, snapshot.listings_count, snapshot.rejected_count]).toEqual([7, 7, 0]);
    expect(snapshot.sha256).toBe(catalog.sha256);
  });
});

describe('readCatalog from a file', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'catalog-'));
  const write = (name: string, value: unknown) => {
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify(value));
    return file;
  };

  it('default: a page, a crawl wrapper and a bare array give the same catalog', async () => {
    const expected = buildCatalog(ITEMS, { source: 'x', fetchedAt: new Date(0) }, OPTIONS).sha256;
    const files = [
      write('page.json', { x402Version: 2, items: ITEMS, pagination: { limit: 1000, offset: 0, total: 7 } }),
      write('crawl.json', { resources: ITEMS, total: 7, crawledAt: '2025-12-31T00:00:00Z', partial: false }),
      write('array.json', ITEMS),
    ];
    const catalogs = await Promise.all(files.map((f) => readCatalog(f, OPTIONS)));
    expect(catalogs.map((c) => [c.source, c.sha256, c.listings.length])).toEqual([
      ['page.json', expected, 7],
      ['crawl.json', expected, 7],
      ['array.json', expected, 7],
    ]);
  });

  it('error: a crawl marked partial, a file of another shape and a missing file fail (not temporarily)', async () => {
    const partial = write('partial.json', { resources: ITEMS.slice(0, 2), total: 7, partial: true });
    const other = write('other.json', { hello: 'world' });
    for (const file of [partial, other, path.join(dir, 'missing.json')]) {
      const error = await readCatalog(file, OPTIONS).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TallyError);
      expect(isTemporary(error)).toBe(false);
    }
  });
});
