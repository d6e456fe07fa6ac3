import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { backends, freshDatabase } from '../helpers/db.ts';

/**
 * Migration 0039 (search_words, search_document, search_score) rebuilds the search words of the
 * catalog snapshots stored before it. The postings expected here are worked out by hand from the
 * rule (docs/api.md, "Search"): a word's score is 4 for the title, + 2 for the description,
 * + 1 for the resource URL; words are the lowercased runs of letters and digits.
 */
const POSTINGS: [string, number][] = [
  ['api', 5], // title + URL
  ['example', 1],
  ['https', 1],
  ['more', 2],
  ['v', 1],
  ['video', 6], // title + description
  ['videos', 2],
];

describe.each(backends())('migration 0039 on $backend', ({ backend }) => {
  it('behavior: a snapshot stored before it keeps the same words and scores, and new rows get them too', async () => {
    const db = await freshDatabase(backend, { migrate: false });
    try {
      const all = loadMigrations();
      await migrate(
        db.db,
        all.filter((m) => m.version < 39),
      );
      const listing = (snapshot: bigint, id: string) => ({
        snapshot_id: snapshot,
        listing_id: id,
        item_index: 0,
        accept_index: 0,
        resource_url: 'https://v.example/API',
        network: 'base',
        canonical_network: 'eip155:8453',
        pay_to: `0x${'ab'.repeat(20)}`,
        asset: 'other',
        verifiability: 'other_rail' as const,
        seller_address: null,
        title: 'Video-API',
        description: 'Videos, video & more',
        category: 'other',
        category_source: 'auto' as const,
      });
      const snapshot = async () =>
        (
          await db.db
            .insertInto('catalog_snapshots')
            .values({
              source: 'test',
              fetched_at: '2026-01-01T00:00:00Z',
              sha256: '00'.repeat(32),
              items_count: 1,
              listings_count: 1,
              rejected_count: 0,
            })
            .returning('snapshot_id')
            .executeTakeFirstOrThrow()
        ).snapshot_id;
      const before = await snapshot();
      await db.db.insertInto('catalog_listings').values(listing(before, 'old')).execute();
      await migrate(db.db, all);
      const after = await snapshot();
      await db.db.insertInto('catalog_listings').values(listing(after, 'new')).execute();

      const postings = async (id: bigint) =>
        (
          await db.db
            .selectFrom('catalog_listing_words')
            .select(['word', 'score'])
            .where('snapshot_id', '=', id)
            .orderBy('word')
            .execute()
        ).map((r) => [r.word, r.score]);
      expect(await postings(before)).toEqual(POSTINGS);
      expect(await postings(after)).toEqual(POSTINGS);
      const bands = await db.db
        .selectFrom('catalog_word_bands')
        .select(['word', 'score', 'listings'])
        .where('snapshot_id', '=', before)
        .orderBy('word')
        .execute();
      expect(bands.map((b) => [b.word, b.score, b.listings])).toEqual(POSTINGS.map(([w, s]) => [w, s, 1]));
      // the query's cut of a text is the documents' cut
      const { rows } = await sql<{
        words: string[];
      }>`select tsvector_to_array(search_words('Video-API, videos!')) as words`.execute(db.db);
      expect(rows[0]!.words).toEqual(['api', 'video', 'videos']);
    } finally {
      await db.close();
    }
  });
});
