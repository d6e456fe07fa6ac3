import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { openDatabase } from '../../src/db/index.ts';
import { freshDatabase } from '../helpers/db.ts';
import { A, listingId, seedFixture } from './fixture.ts';
import { get } from './helpers.ts';

// Roles are per cluster, so this runs on real Postgres only (PGlite has a single superuser).
describe.skipIf(!process.env.TEST_DATABASE_URL)('API through a SELECT-only role on pg', () => {
  it('default: every endpoint serves through a role that can only SELECT', async () => {
    const owner = await freshDatabase('pg');
    const role = `api_ro_${randomBytes(5).toString('hex')}`;
    let reader: Awaited<ReturnType<typeof openDatabase>> | undefined;
    try {
      await seedFixture(owner.db);
      const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(owner.db)).rows[0]!.s;
      await sql
        .raw(
          `create role ${role} login; grant usage on schema ${schema} to ${role}; grant select on all tables in schema ${schema} to ${role}`,
        )
        .execute(owner.db);
      const url = new URL(owner.url!);
      url.username = role;
      reader = await openDatabase({ databaseUrl: url.toString(), maxConnections: 2 });
      // The role really is read-only.
      await expect(sql`insert into published_pointer (generation) values (1)`.execute(reader.db)).rejects.toMatchObject(
        { code: '42501' },
      );

      const builds: number[] = [];
      const app = await buildApi(reader.db, {
        rateLimitPerMinute: 1000,
        cadenceSeconds: 900,
        onBundleBuild: (g) => builds.push(g),
      });
      try {
        const urls = [
          '/api/v1/meta',
          '/api/v1/sellers?limit=2',
          '/api/v1/rankings',
          `/api/v1/sellers/${A}`,
          `/api/v1/sellers/${A}/payments`,
          '/api/v1/market/daily',
          '/api/v1/sellers?generation=1&category=inference',
        ];
        for (const u of urls) {
          const res = await get(app, u);
          expect(res.status, u).toBe(200);
          expect(res.json.generation, u).toBe(1);
        }
        const page = await get(app, '/api/v1/sellers?limit=2');
        expect(page.json.listings.map((l: { listing_id: string }) => l.listing_id)).toEqual([
          listingId(1),
          listingId(2),
        ]);
        expect((await get(app, `/api/v1/sellers/${A}/payments`)).json.count).toBe(5);
        // The bundle: its digests cannot be stored by this role, so they are built once and kept
        // in memory; the files are served all the same.
        const bundle = '/api/v1/generations/1/bundle';
        const manifest = await get(app, `${bundle}/manifest.json`);
        expect(manifest.status).toBe(200);
        const payments = await get(app, `${bundle}/payments.ndjson`);
        expect(payments.status).toBe(200);
        expect(payments.headers.etag).toBe(
          `"${manifest.json.files.find((f: { name: string }) => f.name === 'payments.ndjson').sha256}"`,
        );
        expect((await get(app, `${bundle}/payments.ndjson`)).text).toBe(payments.text);
        expect(builds).toEqual([1]);
        expect(await owner.db.selectFrom('bundle_files').selectAll().execute()).toEqual([]);
      } finally {
        await app.close();
      }
    } finally {
      await reader?.close();
      await sql.raw(`drop owned by ${role}; drop role ${role}`).execute(owner.db);
      await owner.close();
    }
  });
});
