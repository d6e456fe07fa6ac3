import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { pgPoolOf } from '../../src/db/index.ts';
import { writeJson } from '../../src/lib/json.ts';
import {
  BUNDLE_FILE_NAMES,
  BUNDLE_NDJSON_FILES,
  bundleFileText,
  exportGeneration,
  readGenerationHead,
  readGenerationRows,
} from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { listingId, PAYMENTS, seedFixture } from './fixture.ts';

/**
 * Issue 20: the bundle route streams its files and builds a generation's digests once. Over real
 * HTTP on each backend, against the hand-checked generation 1 of test/api/fixture.ts, served in
 * pages of 4 rows (so every file of more than 4 rows crosses page boundaries) while `export`
 * writes the same files in pages of 1,000.
 */
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each(backends())('bundle files over HTTP ($backend)', ({ backend }) => {
  let database: TestDatabase;
  let exported: string;
  const builds: number[] = [];
  let app: FastifyInstance;
  let base: string;

  const start = async (onBuild: (g: number) => void) => {
    const api = await buildApi(database.db, {
      rateLimitPerMinute: 100_000,
      cadenceSeconds: 900,
      onBundleBuild: onBuild,
      bundlePageRows: 4,
    });
    return { api, url: await api.listen({ port: 0, host: '127.0.0.1' }) };
  };

  beforeAll(async () => {
    database = await freshDatabase(backend);
    await seedFixture(database.db);
    // Text a JSON writer can get wrong: quotes, backslash, control characters, U+2028, DEL, astral.
    await database.db
      .updateTable('gen_listings_fixed')
      .set({ title: 'a "b" \\ c\u0001\t\n\u2028\u007f \u00e9 \u{1f600}' })
      .where('listing_id', '=', listingId(1))
      .execute();
    ({ api: app, url: base } = await start((g) => builds.push(g)));
    exported = await mkdtemp(path.join(os.tmpdir(), 'x402-bundle-api-'));
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    if (exported) await rm(exported, { recursive: true, force: true });
  });

  const download = async (url: string, name: string, init?: RequestInit) => {
    const res = await fetch(`${url}/api/v1/generations/1/bundle/${name}`, init);
    return { res, body: Buffer.from(await res.arrayBuffer()) };
  };

  it('behavior: 20 concurrent requests build the digests once; every body is the exported file byte for byte, and the manifest hashes each served file', async () => {
    // The reported fault: concurrent payments.ndjson requests; with them, every other file once.
    const names = [
      ...Array<string>(11).fill('payments.ndjson'),
      ...BUNDLE_FILE_NAMES.filter((n) => n !== 'payments.ndjson'),
    ];
    expect(names).toHaveLength(20);
    const served = await Promise.all(names.map((name) => download(base, name)));
    expect(builds).toEqual([1]);

    const out = path.join(exported, 'g1');
    await exportGeneration(database.db, 1, out);
    const manifest = JSON.parse(served[names.indexOf('manifest.json')]!.body.toString('utf8')) as {
      files: { name: string; sha256: string; rows: number }[];
    };
    for (const [i, name] of names.entries()) {
      const { res, body } = served[i]!;
      expect(res.status, name).toBe(200);
      expect(res.headers.get('cache-control'), name).toBe('public, max-age=31536000, immutable');
      expect(body.equals(await readFile(path.join(out, name))), name).toBe(true);
      // The ETag is the body's sha256; for an NDJSON file, the manifest's.
      expect(res.headers.get('etag'), name).toBe(`"${sha256(body)}"`);
      if (name === 'manifest.json') continue;
      const entry = manifest.files.find((f) => f.name === name)!;
      expect(sha256(body), name).toBe(entry.sha256);
      expect(body.toString('utf8').split('\n').filter(Boolean), name).toHaveLength(entry.rows);
    }
    // Worked out from the fixture: the 17 verified payments of the window plus the one of
    // 2025-12-02T02:00Z (after market_from, before the window); the plain transfer and the one
    // after the as-of block are none. 18 rows: five pages of 4 in the API's stream.
    expect(manifest.files.find((f) => f.name === 'payments.ndjson')!.rows).toBe(PAYMENTS.length + 1);
    // The lines the database writes (row_to_json) are what writeJson writes of the values the
    // whole-generation reader returns (the audit's): file by file, byte for byte.
    const rows = await readGenerationRows(database.db, 1);
    for (const { name, key } of BUNDLE_NDJSON_FILES) {
      const lines = (rows[key] as unknown[]).map((r) => (key === 'catalogItemLines' ? (r as string) : writeJson(r)));
      const body = served[names.indexOf(name)]!.body.toString('utf8');
      expect(body, name).toBe(lines.map((l) => `${l}\n`).join(''));
    }
    expect(served[names.indexOf('listings.ndjson')]!.body.toString('utf8')).toContain(
      '"title":"a \\"b\\" \\\\ c\\u0001\\t\\n\u2028\u007f \u00e9 \u{1f600}"',
    );
    expect(PAYMENTS.length + 1).toBe(18);

    // Built once: later requests, here and in a second API process over the same database (the
    // digests are stored), build nothing.
    await Promise.all(BUNDLE_FILE_NAMES.map((name) => download(base, name)));
    const again: number[] = [];
    const second = await start((g) => again.push(g));
    try {
      const { res, body } = await download(second.url, 'payments.ndjson');
      expect(res.status).toBe(200);
      expect(body.equals(await readFile(path.join(out, 'payments.ndjson')))).toBe(true);
    } finally {
      await second.api.close();
    }
    expect(builds).toEqual([1]);
    expect(again).toEqual([]);
    expect((await fetch(`${base}/api/v1/meta`)).status).toBe(200);
  });

  it('behavior: a generation with no stored digests (published before migration 0024) is built at its first download; HEAD gives the length without a body; If-None-Match gives 304', async () => {
    const out = path.join(exported, 'g1-head');
    await exportGeneration(database.db, 1, out);
    await database.db.deleteFrom('bundle_files').execute();
    const builtHere: number[] = [];
    const fresh = await start((g) => builtHere.push(g));
    try {
      const file = await readFile(path.join(out, 'payments.ndjson'));
      const head = await download(fresh.url, 'payments.ndjson', { method: 'HEAD' });
      expect(head.res.status).toBe(200);
      expect(head.res.headers.get('content-length')).toBe(String(file.length));
      expect(head.res.headers.get('etag')).toBe(`"${sha256(file)}"`);
      expect(head.body.length).toBe(0);
      expect(builtHere).toEqual([1]);
      const stored = await database.db.selectFrom('bundle_files').select('name').where('generation', '=', 1).execute();
      expect(stored.map((r) => r.name).sort()).toEqual(BUNDLE_FILE_NAMES.filter((n) => n !== 'manifest.json').sort());

      const cached = await download(fresh.url, 'payments.ndjson', {
        headers: { 'if-none-match': `"${sha256(file)}"` },
      });
      expect(cached.res.status).toBe(304);
      expect(cached.body.length).toBe(0);
      const manifest = await download(fresh.url, 'manifest.json');
      expect(manifest.body.equals(await readFile(path.join(out, 'manifest.json')))).toBe(true);
      expect(builtHere).toEqual([1]);
      expect((await fetch(`${fresh.url}/api/v1/meta`)).status).toBe(200);
    } finally {
      await fresh.api.close();
    }
  });

  it('error: a reader that stops midway (a client gone) gives its database connection back', async () => {
    const head = await readGenerationHead(database.db, 1);
    // Pages of one row on the embedded database; on Postgres, the first chunk of the COPY.
    for await (const page of bundleFileText(database.db, head, 'payments.ndjson', 1)) {
      expect(page.rows).toBeGreaterThan(0);
      break;
    }
    // On PGlite a transaction left open would hold the only connection: this would never answer.
    expect((await fetch(`${base}/api/v1/meta`)).status).toBe(200);
    const pool = pgPoolOf(database.db);
    if (pool) expect(pool.totalCount - pool.idleCount).toBe(0); // no client still checked out
    const { body } = await download(base, 'payments.ndjson');
    expect(body.toString('utf8').split('\n').filter(Boolean)).toHaveLength(PAYMENTS.length + 1);
  });
});
